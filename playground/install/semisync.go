package install

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// SemiSyncOff is the semi-sync mode that leaves replication asynchronous.
const SemiSyncOff = "off"

// SemiSyncModes are the values of the demo's --semi-sync and of a
// scenario's semi-sync mode: off, or a spec.mysql.semiSync.dataDurability.
var SemiSyncModes = []string{SemiSyncOff, string(v1alpha1.DurabilityPreferred), string(v1alpha1.DurabilityRequired)}

// SemiSync is the spec.mysql.semiSync entry for mode, as a YAML flow-map
// entry ("semiSync: {...}"), or "" for off and for the empty mode (the
// spec's default: off). Any other mode is refused.
func SemiSync(mode string) (string, error) {
	switch mode {
	case "", SemiSyncOff:
		return "", nil
	case string(v1alpha1.DurabilityPreferred), string(v1alpha1.DurabilityRequired):
		return fmt.Sprintf("semiSync: {enabled: true, dataDurability: %s}", mode), nil
	}
	return "", fmt.Errorf("semi-sync mode %q: want one of %v", mode, SemiSyncModes)
}

// MySQLSpec is the spec's mysql line (indented by two spaces): storage of
// 1Gi, flavor when not empty, and the semi-sync mode.
func MySQLSpec(flavor, semiSync string) (string, error) {
	ss, err := SemiSync(semiSync)
	if err != nil {
		return "", err
	}
	line := "  mysql: {"
	if flavor != "" {
		line += "flavor: " + flavor + ", "
	}
	line += "storage: {size: 1Gi}"
	if ss != "" {
		line += ", " + ss
	}
	return line + "}\n", nil
}

// SemiSyncSettled says whether a group with semi-sync on has its active
// site's commits waiting for a replica (SemiSyncDegraded False); a group
// with semi-sync off is settled.
func SemiSyncSettled(mg *v1alpha1.MysqlFailoverGroup) error {
	if !mg.Spec.MySQL.SemiSync.Enabled {
		return nil
	}
	for _, c := range mg.Status.Conditions {
		if c.Type == v1alpha1.ConditionSemiSyncDegraded {
			if c.Status != metav1.ConditionFalse {
				return fmt.Errorf("semi-sync not settled: %s %s/%s: %s", c.Type, c.Status, c.Reason, c.Message)
			}
			return nil
		}
	}
	return fmt.Errorf("semi-sync not settled: no %s condition yet", v1alpha1.ConditionSemiSyncDegraded)
}
