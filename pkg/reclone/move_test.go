package reclone_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// TestAResumedMoveKeepsWhatWasPreserved: a sidecar killed in the middle
// of moving the datadir aside (state Moving, ibdata1 already in the
// preservation folder) resumes the move. Between the kill and the resume
// the kubelet restarted mysqld on the half-moved datadir, and InnoDB made
// a fresh, empty ibdata1 there: the resumed move must not put it over the
// preserved one (each attempt moves into a folder of its own).
func TestAResumedMoveKeepsWhatWasPreserved(t *testing.T) {
	c, _, _, data, e := siteBed(t)
	id := "pdx:confirm=orders@20261124T230500Z"
	// Simulate the kill: the state says the move began, the folder holds
	// the part already moved.
	preservedAt := filepath.Join(filepath.Dir(data), "preserved", "orders-pdx-diverged-20261124T230100Z")
	dst := filepath.Join(preservedAt, "datadir")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "ibdata1"), []byte("the diverged data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(preservedAt, "divergent-gtid"), []byte("0-3:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(data, "app")); err != nil {
		t.Fatal(err)
	}
	// mysqld restarted on the half-moved datadir and created a fresh one.
	if err := os.WriteFile(filepath.Join(data, "ibdata1"), []byte("fresh empty tablespace"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := `{"id":"` + id + `","divergentGtid":"0-3:1","preservedAt":"` + preservedAt + `","preserved":true,"moving":true}`
	if err := os.MkdirAll(e.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Dir, "reclone.json"), []byte(st), 0o600); err != nil {
		t.Fatal(err)
	}
	q := reclone.Request{ID: id, Phase: v1alpha1.RecoveryCloning, Donor: "iad", DivergentGtid: "0-3:1", Generation: 5}
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, err := c.Do(t.Context(), "shop", "orders", "pdx", q)
		if err != nil {
			t.Fatal(err)
		}
		if a.Done || a.Failed != "" || a.Message != "" {
			t.Logf("answer: %+v", a)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no outcome: %+v", a)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.Wait()
	got, err := os.ReadFile(filepath.Join(dst, "ibdata1"))
	if err != nil || string(got) != "the diverged data" {
		t.Fatalf("the preserved ibdata1 was replaced: %q, %v", got, err)
	}
	if got, err := os.ReadFile(filepath.Join(dst+".1", "ibdata1")); err != nil || string(got) != "fresh empty tablespace" {
		t.Fatalf("the resumed move's ibdata1: %q, %v", got, err)
	}
}

// TestTwoReclonesNeverShareAFolder: two reclones of the site in the same
// second (or with the clock set back) preserve into folders of their own.
func TestTwoReclonesNeverShareAFolder(t *testing.T) {
	at := time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC)
	c, _, _, _, e := siteBed(t, func(e *reclone.Executor) { e.Now = func() time.Time { return at } })
	a := phases(t, c, e, recloneA, v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData)
	b := phases(t, c, e, recloneB, v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData)
	e.Wait()
	if a.PreservedAt == b.PreservedAt {
		t.Fatalf("both reclones preserve into %s", a.PreservedAt)
	}
}
