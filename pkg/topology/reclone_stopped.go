package topology

import "fmt"

// RecloneStillReplicates says why site's observation may not be judged by
// RecloneMayWipe, "" when it may: a reachable site observed with its
// replication running (both threads, or its IO thread acknowledging the
// active site as a semi-sync replica) goes on receiving and acknowledging
// after the observation, so what the observation shows is not all it
// holds. Its mysqld may have restarted since the operator stopped its
// replication (a restart starts replication again). A site not observed
// now (down, or its probe stale) passes: RecloneMayWipe takes it to hold
// up to all the active site holds.
func RecloneStillReplicates(in Input, site string) string {
	s, ok := in.Site(site)
	switch {
	case !ok:
		return "no such site"
	case !s.reachable() || s.Stale:
		return ""
	case s.Replication.Running || s.Replication.SemiSyncAcking:
		return fmt.Sprintf("%s was observed replicating (its mysqld may have restarted since its replication was stopped)", site)
	}
	return ""
}
