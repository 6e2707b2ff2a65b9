package mysql

// SetSalvageCheckedHook makes f run in SalvageFrom right after the target
// was read read-only, before its replication is changed, and returns the
// function that removes it. Tests use it to interleave another operator's
// step there.
func SetSalvageCheckedHook(f func()) (restore func()) {
	old := salvageChecked
	salvageChecked = f
	return func() { salvageChecked = old }
}
