package testbed

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort(Host, strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d not bindable: %v", p, err)
		}
		_ = l.Close()
	}
}

func TestCleanupsRunLastFirstOnce(t *testing.T) {
	var c Cleanups
	var got []int
	for i := range 3 {
		c.Cleanup(func() { got = append(got, i) })
	}
	c.Run()
	c.Run()
	if len(got) != 3 || got[0] != 2 || got[2] != 0 {
		t.Fatalf("got %v, want [2 1 0]", got)
	}
}

func TestQuote(t *testing.T) {
	if got := quote(`a'b\c`); got != `'a\'b\\c'` {
		t.Fatalf("quote: %s", got)
	}
}

func TestMissingServerSaysHowToInstall(t *testing.T) {
	_, err := findBinary("no-such-server-bloodraven")
	if err == nil || !strings.Contains(err.Error(), "not found at /usr/sbin/no-such-server-bloodraven") ||
		!strings.Contains(err.Error(), "run make deps") {
		t.Fatalf("got %v", err)
	}
}
