package grouploop

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// NewPassPersister is the poll loop's status patcher for a pass that read
// g, for tests outside the package (claim_envtest_test.go).
func NewPassPersister(c client.Client, r client.Reader, g *v1alpha1.MysqlFailoverGroup) failover.Persister {
	p := &statusPatcher{c: c, reader: r}
	p.reset(g)
	return p
}
