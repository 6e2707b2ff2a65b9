package topology

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// BackupSource picks the site a backup is taken from: the site asked for,
// if it is fit, else the first caught-up replica in spec order, else the
// writing primary. The fitness rules are CloneDonor's: never a diverged,
// administrator-fenced, possibly-writable, stale or unreachable site, and
// a replica only while it replicates within MaxLag. While a failover,
// emergency or planned, owns the topology the backup waits: ErrBackupDeferred.
// With no fit site: ErrNoDonor, with every site's reason.
func BackupSource(in Input, asked string) (Donor, error) {
	if err := in.Validate(); err != nil {
		return Donor{}, err
	}
	switch {
	case in.InFlight != nil:
		return Donor{}, fmt.Errorf("%w: failover %s->%s in flight", ErrBackupDeferred, in.InFlight.From, in.InFlight.To)
	case in.PlannedInFlight:
		return Donor{}, fmt.Errorf("%w: planned failover in flight", ErrBackupDeferred)
	case in.ActiveSite == "":
		return Donor{}, fmt.Errorf("%w: no active site recorded", ErrNoDonor)
	}
	if asked == "" {
		return pickDonor(in, "")
	}
	s, ok := in.Site(asked)
	if !ok {
		return Donor{}, fmt.Errorf("backup source %q: %w", asked, ErrUnknownSite)
	}
	active, _ := in.Site(in.ActiveSite)
	if s.Name == active.Name {
		if r := primaryUnfit(active); r != "" {
			return Donor{}, fmt.Errorf("%w: %s (active): %s", ErrNoDonor, s.Name, r)
		}
		return Donor{Site: s.Name, Primary: true}, nil
	}
	diverged := active.State == v1alpha1.StateWritable &&
		slices.ContainsFunc(divergence(in, active), func(d Divergence) bool { return d.Site == s.Name })
	if r := replicaUnfit(in, s, active, diverged); r != "" {
		return Donor{}, fmt.Errorf("%w: %s: %s", ErrNoDonor, s.Name, r)
	}
	return Donor{Site: s.Name}, nil
}

// BackupRecord is what retention knows of one backup.
type BackupRecord struct {
	Name  string
	Phase v1alpha1.BackupPhase
	// Done is when it succeeded or failed (zero while pending or running).
	Done time.Time
}

// Retention is RetentionPolicy with its defaults applied and MaxAge parsed.
type Retention struct {
	KeepLast      int // 0: no limit by count
	MaxAge        time.Duration
	MinKeep       int
	MaxFailedKeep int
}

// ParseRetention reads a policy; maxAge is hours or days ("72h", "30d", "1d12h").
func ParseRetention(p v1alpha1.RetentionPolicy) (Retention, error) {
	r := Retention{MinKeep: max(int(p.MinKeep), 1), MaxFailedKeep: 10}
	if p.KeepLast != nil {
		r.KeepLast = int(*p.KeepLast)
	}
	if p.MaxFailedKeep != nil {
		r.MaxFailedKeep = int(*p.MaxFailedKeep)
	}
	if p.MaxAge != nil {
		d, err := parseDays(*p.MaxAge)
		if err != nil {
			return r, err
		}
		r.MaxAge = d
	}
	return r, nil
}

func parseDays(s string) (time.Duration, error) {
	var total time.Duration
	rest := s
	for rest != "" {
		i := strings.IndexAny(rest, "hd")
		if i <= 0 {
			return 0, fmt.Errorf("%w: maxAge %q: want hours or days such as 72h or 30d", ErrRetention, s)
		}
		var n int64
		if _, err := fmt.Sscan(rest[:i], &n); err != nil || n < 0 {
			return 0, fmt.Errorf("%w: maxAge %q: %v", ErrRetention, s, err)
		}
		unit := time.Hour
		if rest[i] == 'd' {
			unit = 24 * time.Hour
		}
		total += time.Duration(n) * unit
		rest = rest[i+1:]
	}
	if total <= 0 {
		return 0, fmt.Errorf("%w: maxAge %q must be positive", ErrRetention, s)
	}
	return total, nil
}

// Prune names the backups retention deletes at now, oldest first.
// Successful backups beyond the newest KeepLast, or older than MaxAge, go,
// but the newest MinKeep successful ones always stay; failed backups
// beyond the newest MaxFailedKeep go; pending and running ones never.
func Prune(backups []BackupRecord, r Retention, now time.Time) []string {
	var ok, failed []BackupRecord
	for _, b := range backups {
		switch b.Phase {
		case v1alpha1.BackupSucceeded:
			ok = append(ok, b)
		case v1alpha1.BackupFailed:
			failed = append(failed, b)
		}
	}
	newestFirst := func(a, b BackupRecord) int {
		if c := b.Done.Compare(a.Done); c != 0 {
			return c
		}
		return strings.Compare(b.Name, a.Name)
	}
	slices.SortFunc(ok, newestFirst)
	slices.SortFunc(failed, newestFirst)
	var gone []BackupRecord
	for i, b := range ok {
		switch {
		case i < r.MinKeep:
		case r.KeepLast > 0 && i >= r.KeepLast:
			gone = append(gone, b)
		case r.MaxAge > 0 && now.Sub(b.Done) > r.MaxAge:
			gone = append(gone, b)
		}
	}
	if len(failed) > r.MaxFailedKeep {
		gone = append(gone, failed[r.MaxFailedKeep:]...)
	}
	slices.SortFunc(gone, func(a, b BackupRecord) int { return newestFirst(b, a) })
	names := make([]string, len(gone))
	for i, b := range gone {
		names[i] = b.Name
	}
	return names
}

// BackupRetry says when a failed try of a backup is tried again, and
// whether it is failed for good: five tries, 30 s apart doubling to 8 min.
// A failed backup is one MysqlBackup; the next schedule's is another, so a
// failure never blocks later backups.
func BackupRetry(attempts int, lastFailure time.Time) (at time.Time, giveUp bool) {
	const tries = 5
	if attempts >= tries {
		return time.Time{}, true
	}
	wait := 30 * time.Second << min(max(attempts-1, 0), 4)
	return lastFailure.Add(wait), false
}
