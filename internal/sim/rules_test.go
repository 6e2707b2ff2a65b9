package sim

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

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
