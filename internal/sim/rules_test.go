package sim

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func at(s int) time.Time { return Epoch.Add(time.Duration(s) * time.Second) }

func TestLeaseSidecar(t *testing.T) {
	settings := SidecarSettings{Site: "iad", LeaseTimeout: 20 * time.Second, PeerCheckInterval: 5 * time.Second}
	gen := func(active string, g int64) View { return View{Active: active, Generation: g, ObservedAt: at(0)} }
	type tick struct {
		at       int
		operator *View
		peers    []View
		writable bool
		fence    string // "" for no fence
	}
	pdx2 := gen("pdx", 2)
	iad1 := gen("iad", 1)
	cases := []struct {
		name  string
		ticks []tick
	}{
		{"own view and contact: no fence", []tick{{5, &iad1, nil, true, ""}, {10, &iad1, nil, true, ""}}},
		{"operator names another site with a higher generation", []tick{{5, &iad1, nil, true, ""}, {10, &pdx2, nil, true, FenceByView}}},
		{"a peer relays the higher generation", []tick{{5, &iad1, nil, true, ""}, {10, nil, []View{pdx2}, true, FenceByView}}},
		{"a lower generation is not adopted", []tick{{5, &pdx2, nil, false, ""}, {10, nil, []View{iad1}, true, FenceByView}}},
		{"nobody heard for leaseTimeout", []tick{{5, &iad1, nil, true, ""}, {20, nil, nil, true, ""}, {25, nil, nil, true, FenceByLease}}},
		{"a peer with a view renews the lease", []tick{{5, &iad1, nil, true, ""}, {20, nil, []View{iad1}, true, ""}, {35, nil, nil, true, ""}}},
		{"a peer without a view does not renew the lease", []tick{{5, &iad1, nil, true, ""}, {20, nil, []View{{}}, true, ""}, {25, nil, []View{{}}, true, FenceByLease}}},
		{"never fences a read-only mysqld", []tick{{5, &pdx2, nil, false, ""}, {60, nil, nil, false, ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := NewLeaseSidecar(settings, at(0))
			for _, tk := range c.ticks {
				fence, why := l.Tick(at(tk.at), tk.operator, tk.peers, tk.writable)
				if fence != (tk.fence != "") || why != tk.fence {
					t.Fatalf("tick at %ds: fence=%v (%s), want %q", tk.at, fence, why, tk.fence)
				}
			}
		})
	}
}

func TestDesignConfirmer(t *testing.T) {
	base := func() Evidence {
		return Evidence{Site: "iad", Now: at(100), Active: "pdx", Generation: 3, UnfencedAt: at(0),
			LastContact: at(50), LeaseTimeout: 20 * time.Second, PeerCheckInterval: 5 * time.Second,
			Peers: []PeerAdoption{{Site: "pdx", Adopted: true, At: at(60)}, {Site: "fra", Adopted: true, At: at(70)}}}
	}
	cases := []struct {
		name   string
		change func(*Evidence)
		ok     bool
		by     string
	}{
		{"deadline from the last peer adoption has passed", func(*Evidence) {}, true, ConfirmedByLease},
		{"deadline not yet passed", func(e *Evidence) { e.Now = at(90) }, false, ""},
		{"deadline is strict", func(e *Evidence) { e.Now = at(95) }, false, ""},
		{"a late peer adoption moves the deadline", func(e *Evidence) { e.Peers[1].At = at(80) }, false, ""},
		{"a peer that never held the generation blocks", func(e *Evidence) { e.Peers[1].Adopted = false }, false, ""},
		{"a peer whose Pod is gone does not block", func(e *Evidence) {
			e.Peers[1] = PeerAdoption{Site: "fra", PodGone: true, GoneAt: at(65)}
		}, true, ConfirmedByLease},
		{"a peer whose Pod went away late moves the deadline", func(e *Evidence) {
			e.Peers[1] = PeerAdoption{Site: "fra", PodGone: true, GoneAt: at(80)}
		}, false, ""},
		{"a gone peer that adopted before going counts from its adoption", func(e *Evidence) {
			e.Peers[1] = PeerAdoption{Site: "fra", PodGone: true, GoneAt: at(90), Adopted: true, At: at(70)}
		}, true, ConfirmedByLease},
		{"a late last contact moves the deadline", func(e *Evidence) { e.LastContact = at(78) }, false, ""},
		{"the active site is never confirmed by lease", func(e *Evidence) { e.Active = "iad" }, false, ""},
		{"seen read-only after the unfence", func(e *Evidence) { e.Now = at(61); e.ObservedSafeAt = at(61) }, true, ConfirmedByProbe},
		{"seen read-only before the unfence is not proof", func(e *Evidence) {
			e.Now, e.UnfencedAt, e.ObservedSafeAt = at(61), at(40), at(30)
		}, false, ""},
		{"Pod gone", func(e *Evidence) { e.Now = at(61); e.PodGone = true }, true, ConfirmedByPodGone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := base()
			c.change(&ev)
			ok, by := DesignConfirmer{}.Confirm(ev)
			if ok != c.ok || by != c.by {
				t.Fatalf("Confirm = %v %q, want %v %q", ok, by, c.ok, c.by)
			}
		})
	}
	// The literal rule ignores the peers and confirms too early.
	ev := base()
	ev.Now, ev.Peers[1].At = at(76), at(75)
	if ok, _ := (NaiveConfirmer{}).Confirm(ev); !ok {
		t.Fatal("naive rule should confirm 25s after the last operator contact")
	}
	if ok, _ := (DesignConfirmer{}).Confirm(ev); ok {
		t.Fatal("design rule must wait for 25s after the last peer adoption")
	}
}

func TestScheduleRoundTrip(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		sched := scheduleFor(ConfigForSeed(seed, DefaultSteps))
		back, err := ParseSchedule(sched.String())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back, sched) {
			t.Fatalf("seed %d: schedule does not round-trip:\n%s\n---\n%s", seed, sched, back)
		}
	}
}

func TestParseScheduleErrors(t *testing.T) {
	cases := []struct{ name, text string }{
		{"unknown key", "at=3 kill-pod site=1 when=5"},
		{"not a number", "at=x kill-pod"},
		{"no kind", "at=3 site=1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseSchedule(c.text); !errors.Is(err, ErrSchedule) {
				t.Fatalf("err = %v, want ErrSchedule", err)
			}
		})
	}
	s, err := ParseSchedule("at=3 kill-pod site=primary dur=5; at=9 drop-link site=0 peer=operator dur=4")
	if err != nil || len(s) != 2 || s[0].Site != Primary || s[1].Peer != OperatorNode {
		t.Fatalf("got %v, %v", s, err)
	}
}

func TestConfigValidate(t *testing.T) {
	good := ConfigForSeed(1, 10)
	cases := []struct {
		name   string
		change func(*Config)
		msg    string
	}{
		{"one site", func(c *Config) { c.Roles = c.Roles[:1] }, "sites"},
		{"first site not a candidate", func(c *Config) { c.Roles[0] = "dr-only" }, "first site"},
		{"lease below three intervals", func(c *Config) { c.LeaseTimeout = 2 * c.PeerCheckInterval }, "leaseTimeout"},
		{"zero threshold", func(c *Config) { c.FailureThreshold = 0 }, "thresholds"},
		{"sub-step poll", func(c *Config) { c.PollInterval = time.Millisecond }, "intervals"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := good
			cfg.Roles = append(cfg.Roles[:0:0], good.Roles...)
			c.change(&cfg)
			_, err := Run(cfg)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want ErrConfig mentioning %q", err, c.msg)
			}
		})
	}
}
