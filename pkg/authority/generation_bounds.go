package authority

import "github.com/shipstream/bloodraven/pkg/topology"

// reportableGeneration reports whether a sidecar may report generation n:
// 0 (none yet) up to topology.MaxGeneration. A larger value is forged or
// corrupted (no operator publishes one); recording it would hold the group
// with AuthorityRegressed beyond any confirmation, and count as adoption.
func reportableGeneration(n int64) bool { return n >= 0 && n <= topology.MaxGeneration }
