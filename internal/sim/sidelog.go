package sim

import (
	"context"
	"log/slog"
)

// The sidecar's Runner logs what it does; the sim's trace shows its
// fences, its wake-up rule and its stops of mysqld from those records, and
// counts its fences by reason (Stats.SidecarFences). The records are
// queued while the Runner runs and written after (settle): the trace line
// names the view the process holds then.

// sideLog is one log record of a sidecar that the trace shows.
type sideLog struct {
	msg, reason, how string
}

// logHold and logRelease are what the sim's mysqld notes of the write
// hold, in order with the Runner's records.
const (
	logHold    = "(hold)"
	logRelease = "(release)"
)

// note queues a line of the trace; nil (no process) notes nothing.
func (sc *simSidecar) note(l sideLog) {
	if sc != nil {
		sc.logs = append(sc.logs, l)
	}
}

// tracedLogs are the Runner's messages the trace shows.
var tracedLogs = map[string]bool{
	"self-fenced mysqld":                                            true,
	"fencing before anything else on wake-up":                       true,
	"lease ran out during the tick; fencing without waiting for it": true,
	"stopped mysqld: it boots fenced":                               true,
	"could not stop mysqld":                                         true,
}

// Enabled implements slog.Handler: the messages traced are warnings and errors.
func (sc *simSidecar) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

// Handle implements slog.Handler.
func (sc *simSidecar) Handle(_ context.Context, r slog.Record) error {
	if !tracedLogs[r.Message] {
		return nil
	}
	l := sideLog{msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "reason":
			l.reason = a.Value.String()
		case "how":
			l.how = a.Value.String()
		}
		return true
	})
	sc.note(l)
	return nil
}

// WithAttrs implements slog.Handler.
func (sc *simSidecar) WithAttrs([]slog.Attr) slog.Handler { return sc }

// WithGroup implements slog.Handler.
func (sc *simSidecar) WithGroup(string) slog.Handler { return sc }

// flushLogs writes the queued records to the trace and the stats.
func (sc *simSidecar) flushLogs() {
	if len(sc.logs) == 0 {
		return
	}
	w, name := sc.w, sc.s.name
	v, _ := sc.view()
	for _, l := range sc.logs {
		switch l.msg {
		case "self-fenced mysqld":
			w.stats.SidecarFences[l.reason]++
			w.logf("sidecar %s fenced its mysqld (%s), view %s gen %d", name, l.reason, v.ActiveSite, v.Generation)
		case "fencing before anything else on wake-up":
			w.logf("sidecar %s: its rule says fence on waking, on what it last saw (%s); it fences before anything else", name, l.reason)
		case "lease ran out during the tick; fencing without waiting for it":
			w.logf("sidecar %s: its lease ran out during a tick", name)
		case "stopped mysqld: it boots fenced":
			w.stats.SidecarFences[l.reason+"-stop"]++
			w.logf("sidecar %s: its fence (%s) could not complete; it stopped mysqld (%s)", name, l.reason, l.how)
		case logHold:
			w.logf("sidecar %s holds the writes of its fenced mysqld", name)
		case logRelease:
			w.logf("sidecar %s released the write hold", name)
		case "could not stop mysqld":
			w.logf("sidecar %s: its fence (%s) could not complete, nor could it stop mysqld", name, l.reason)
		}
	}
	sc.logs = sc.logs[:0]
}
