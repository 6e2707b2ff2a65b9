package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/shipstream/bloodraven/pkg/authority"
)

// serviceAccountNamespace is where Kubernetes mounts the Pod's namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// newLeaderLock makes the manager's leader-election Lease lock here, rather
// than inside the manager, so that the operator knows its own identity and
// can check, before every step that makes a site writable, that it still
// holds the Lease (authority.LockLeadership).
func newLeaderLock(cfg *rest.Config, f flags) (resourcelock.Interface, error) {
	ns := f.leaderElectionNS
	if ns == "" {
		b, err := os.ReadFile(serviceAccountNamespace)
		if err != nil {
			return nil, fmt.Errorf("leader election namespace: not given and not in a cluster: %w", err)
		}
		ns = strings.TrimSpace(string(b))
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("leader election identity: %w", err)
	}
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cfg.Timeout = 5 * time.Second
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	coord, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, f.leaderElectionID, core, coord,
		resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())})
	if err != nil {
		return nil, fmt.Errorf("leader election lock: %w", err)
	}
	return lock, nil
}

// leadership is the operator's view of its lock; nil when leader election is off.
func leadership(lock resourcelock.Interface) authority.Leadership {
	if lock == nil {
		return nil
	}
	return authority.LockLeadership{Lock: lock, Now: time.Now}
}
