package v1alpha1

import "testing"

// TestSiteRecoveryHolds: which reclones keep their site out of every
// failover and re-assertion.
func TestSiteRecoveryHolds(t *testing.T) {
	cases := []struct {
		name string
		r    *SiteRecovery
		want bool
	}{
		{"no reclone", nil, false},
		{"requested", &SiteRecovery{Phase: RecoveryRequested}, false},
		{"preserving data", &SiteRecovery{Phase: RecoveryPreservingData}, false},
		{"catching up", &SiteRecovery{Phase: RecoveryCatchingUp}, true},
		{"requested after an earlier clone emptied the site", &SiteRecovery{Phase: RecoveryRequested, DataIncomplete: true}, true},
		{"cloning", &SiteRecovery{Phase: RecoveryCloning}, true},
		{"failed in requested", &SiteRecovery{Phase: RecoveryFailed, FailedPhase: RecoveryRequested}, false},
		{"failed in preserving", &SiteRecovery{Phase: RecoveryFailed, FailedPhase: RecoveryPreservingData}, false},
		{"failed in cloning", &SiteRecovery{Phase: RecoveryFailed, FailedPhase: RecoveryCloning}, true},
		{"failed in catching up", &SiteRecovery{Phase: RecoveryFailed, FailedPhase: RecoveryCatchingUp}, true},
		{"cancelled after an earlier clone emptied the site",
			&SiteRecovery{Phase: RecoveryFailed, FailedPhase: RecoveryRequested, DataIncomplete: true}, true},
		{"rejoined after an earlier clone emptied the site", &SiteRecovery{Phase: RecoveryRejoined, DataIncomplete: true}, false},
		{"stopped as the active site", &SiteRecovery{Phase: RecoveryFailed}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Holds(); got != tc.want {
				t.Fatalf("Holds() = %v, want %v", got, tc.want)
			}
		})
	}
}
