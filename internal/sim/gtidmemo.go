package sim

import (
	"sync"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// The simulated mysqlds render their executed sets as text and parse it
// (txs.set) every time the operator or a sidecar asks for their status, a
// twentieth of a real-operator run. A gtid.Set is immutable, so one parsed
// once is shared by every later ask of the same text.

// maxParsedSets bounds the sets parsedSet remembers.
const maxParsedSets = 1 << 14

var parsedSets = struct {
	sync.Mutex
	m map[string]gtid.Set
}{m: map[string]gtid.Set{}}

// parsedSet is gtid.MustParseSet(text), remembered.
func parsedSet(text string) gtid.Set {
	parsedSets.Lock()
	s, ok := parsedSets.m[text]
	parsedSets.Unlock()
	if ok {
		return s
	}
	s = gtid.MustParseSet(text)
	parsedSets.Lock()
	if len(parsedSets.m) >= maxParsedSets {
		clear(parsedSets.m) // runs rarely repeat each other's sets: keep memory bounded
	}
	parsedSets.m[text] = s
	parsedSets.Unlock()
	return s
}
