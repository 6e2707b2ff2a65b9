package testbed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// Ports are drawn below Linux's ephemeral range (32768-60999), so that an
// outgoing connection can never take a server's port while it restarts.
const (
	portLow  = 20000
	portHigh = 32000
)

var ports = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// FreePort returns a TCP port on 127.0.0.1 that accepted a bind a moment ago
// and that this process has not handed out before. Ports are never handed out
// twice within a process, so servers of parallel tests cannot collide; servers
// that still lose a race with another process are restarted on a new port.
func FreePort() (int, error) {
	ports.Lock()
	defer ports.Unlock()
	for range 200 {
		p := portLow + rand.IntN(portHigh-portLow)
		if ports.given[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		if err := l.Close(); err != nil {
			return 0, fmt.Errorf("free port: close probe: %w", err)
		}
		ports.given[p] = true
		return p, nil
	}
	return 0, errors.New("free port: no bindable port left in 20000-32000")
}
