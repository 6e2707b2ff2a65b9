package reclone_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// journalMysqld writes stop/start to a journal the fake mariadb-backup
// also writes its install to.
type journalMysqld struct {
	mu      sync.Mutex
	journal string
}

func (j *journalMysqld) note(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	f, err := os.OpenFile(j.journal, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	_, _ = f.WriteString(s + "\n")
	_ = f.Close()
}

func (j *journalMysqld) Stop(context.Context) error  { j.note("stop"); return nil }
func (j *journalMysqld) Start(context.Context) error { j.note("start"); return nil }

// TestAResumedInstallStopsMysqldFirst: the sidecar was killed after the
// datadir was moved aside and before the clone was installed, and the
// kubelet restarted mysqld on the emptied datadir (Executor's contract
// allows it). The resumed Cloning stops mysqld before it installs.
func TestAResumedInstallStopsMysqldFirst(t *testing.T) {
	bin, root := t.TempDir(), t.TempDir()
	journal := filepath.Join(root, "journal")
	backup := strings.Replace(fakeBackup, `move) mv "$target"/* "$data"/ ;;`,
		`move) echo install >> `+journal+`; mv "$target"/* "$data"/ ;;`, 1)
	tool := func(name, body string) string {
		p := filepath.Join(bin, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mb, bk := tool("mbstream", fakeMbstream), tool("mariadb-backup", backup)
	donor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Trailer", clone.TrailerResult)
		_, _ = io.WriteString(w, "the backup")
		w.Header().Set(clone.TrailerResult, "ok")
	}))
	defer donor.Close()
	data := filepath.Join(root, "data")
	preservedAt := filepath.Join(root, "preserved", "orders-pdx-diverged-20261124T230100Z")
	for _, d := range []string{data, filepath.Join(preservedAt, "datadir", "app")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	id := "pdx:x@1"
	stateDir := filepath.Join(root, "state")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	st := `{"id":"` + id + `","divergentGtid":"0-3:1","preservedAt":"` + preservedAt + `","preserved":true,"moving":true,"moved":true}`
	if err := os.WriteFile(filepath.Join(stateDir, "reclone.json"), []byte(st), 0o600); err != nil {
		t.Fatal(err)
	}
	m := &journalMysqld{journal: journal}
	m.note("start (the kubelet, after the kill)")
	b := newPKI(t)
	src := b.source(t, pdx)
	e := &reclone.Executor{Namespace: "shop", Group: "orders", Site: "pdx", Dir: stateDir,
		DataDir: data, PreserveRoot: filepath.Join(root, "preserved"), DB: &seedingDB{}, Mysqld: m, Donors: []string{"iad"},
		TLS: src, Logger: quiet(), StartTimeout: time.Second, View: func() (string, int64, bool) { return "iad", 5, true },
		Receiver: func(string) (*clone.Receiver, error) {
			return &clone.Receiver{URL: donor.URL, Client: donor.Client(), Backup: bk, Mbstream: mb, Logger: quiet()}, nil
		}}
	h, err := e.Handler(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Wait)
	url := serveTLS(t, src, h)
	c := &reclone.Client{URL: func(string, string, string) string { return url },
		HTTP: httpClient(b.source(t, pki.OperatorIdentity()), pdx)}
	q := reclone.Request{ID: id, Phase: v1alpha1.RecoveryCloning, Donor: "iad", DivergentGtid: "0-3:1", Generation: 5}
	deadline := time.Now().Add(20 * time.Second)
	var a reclone.Answer
	for {
		if a, err = c.Do(t.Context(), "shop", "orders", "pdx", q); err != nil {
			t.Fatal(err)
		}
		if a.Done || a.Failed != "" || a.Message != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.Wait()
	j, _ := os.ReadFile(journal)
	t.Logf("answer %+v; journal:\n%s", a, j)
	lines := strings.Split(strings.TrimSpace(string(j)), "\n")
	running := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "start"):
			running = true
		case l == "stop":
			running = false
		case l == "install" && running:
			t.Fatalf("the clone was installed into the datadir of a running mysqld (journal %q); Cloning answered Done=%v", lines, a.Done)
		}
	}
	if !a.Done {
		t.Fatalf("Cloning: %+v", a)
	}
}
