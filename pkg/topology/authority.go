package topology

// AuthorityVerdict is CheckAuthority's answer.
type AuthorityVerdict string

// The verdicts.
const (
	// AuthorityOK: no sidecar reports a generation above the persisted one.
	AuthorityOK AuthorityVerdict = "OK"
	// AuthorityRegressed: a sidecar holds a generation above the persisted
	// one, so status was emptied, restored from an older copy or written
	// back. Nothing may change until a person confirms.
	AuthorityRegressed AuthorityVerdict = "Regressed"
	// AuthorityConfirmed: a person confirmed at or above every reported
	// generation; persist Generation and go on.
	AuthorityConfirmed AuthorityVerdict = "Confirmed"
)

// MaxGeneration is the highest topology generation a sidecar report may
// carry: the operator refuses a report above it (counted and logged), so a
// forged or corrupted value never enters the authority check or the
// arithmetic on generations. It is far above any real count of topology
// changes (one per failover), and exact in every JSON number reader, so a
// person copying a generation from kubectl output confirms the same number.
const MaxGeneration int64 = 1 << 53

// MaxConfirmGeneration is the highest generation a person may confirm. The
// generation that follows a confirmation, and every later one, stay below
// MaxGeneration for 2^52 topology changes, so the sidecars' reports of
// them are never refused. A report above it (a faulty sidecar: no
// operator ever published such a generation) cannot be confirmed: the
// group stays held until that sidecar's stored generation is repaired.
const MaxConfirmGeneration int64 = 1 << 52

// AuthorityCheck is what CheckAuthority looks at: the persisted generation,
// the highest generation any of the group's sidecars reported to this
// operator, and the generation a person confirmed (0 when none).
type AuthorityCheck struct {
	Status   int64
	Reported int64
	Confirm  int64
}

// CheckAuthority decides whether the persisted authority may be trusted.
// The generation never goes down: a sidecar holding a higher one than
// status proves status lost changes, and the operator must not bootstrap,
// re-assert or fail over from it (it could name a second writer at a
// generation the sidecars ignore). A confirmation counts only when it is
// at least every reported generation and at most MaxConfirmGeneration; the
// new generation is one above it, so every sidecar adopts the view that
// follows, and it never overflows.
func CheckAuthority(c AuthorityCheck) (AuthorityVerdict, int64) {
	switch {
	case c.Reported <= c.Status:
		return AuthorityOK, c.Status
	case c.Confirm >= c.Reported && c.Confirm <= MaxConfirmGeneration:
		return AuthorityConfirmed, c.Confirm + 1
	}
	return AuthorityRegressed, c.Status
}
