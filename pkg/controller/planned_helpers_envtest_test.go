//go:build envtest

package controller_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/controller"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// annotate sets the planned-failover annotation; remove with value nil.
func (e *env) annotate(value any) {
	e.t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{v1alpha1.PlannedFailoverAnnotation: value}}})
	if err != nil {
		e.t.Fatal(err)
	}
	g := &v1alpha1.MysqlFailoverGroup{}
	g.Namespace, g.Name = e.ns, "orders"
	if err := cp.Client.Patch(context.Background(), g, client.RawPatch(types.MergePatchType, patch)); err != nil {
		e.t.Fatalf("annotate %v: %v", value, err)
	}
}

func (e *env) annotated() (string, bool) {
	v, ok := e.get().Annotations[v1alpha1.PlannedFailoverAnnotation]
	return v, ok
}

// planned waits until the block answering request is in phase (terminal
// phases also want the annotation gone) and returns the group.
func (e *env) planned(request string, phase v1alpha1.PlannedFailoverPhase, within time.Duration) *v1alpha1.MysqlFailoverGroup {
	e.t.Helper()
	var g *v1alpha1.MysqlFailoverGroup
	e.eventually(within, fmt.Sprintf("planned %q %s", request, phase), func() bool {
		g = e.get()
		b := g.Status.PlannedFailover
		if b == nil || b.Request != request {
			return false
		}
		if b.Phase.Terminal() && b.Phase != phase {
			e.t.Fatalf("planned %q ended %s/%s: %s", request, b.Phase, b.Reason, b.Message)
		}
		_, annotated := g.Annotations[v1alpha1.PlannedFailoverAnnotation]
		return b.Phase == phase && !(phase.Terminal() && annotated)
	})
	return g
}

// primaryEndpoint follows the -primary Service as kube-proxy would: it
// resolves to the site whose Pod carries role=primary, and to nothing while
// no Pod does. It polls the API server every 10 ms.
type primaryEndpoint struct {
	site atomic.Pointer[string]
	stop chan struct{}
	done chan struct{}
}

func (e *env) followPrimary() *primaryEndpoint {
	ep := &primaryEndpoint{stop: make(chan struct{}), done: make(chan struct{})}
	none := ""
	ep.site.Store(&none)
	go func() {
		defer close(ep.done)
		for {
			var pods corev1.PodList
			err := cp.Client.List(context.Background(), &pods, client.InNamespace(e.ns),
				client.MatchingLabels{v1alpha1.LabelGroup: "orders", v1alpha1.LabelRole: v1alpha1.RolePrimary})
			if err == nil {
				site := ""
				if len(pods.Items) == 1 {
					site = pods.Items[0].Labels[v1alpha1.LabelSite]
				}
				ep.site.Store(&site)
			}
			select {
			case <-ep.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	e.t.Cleanup(ep.close)
	return ep
}

func (ep *primaryEndpoint) current() string { return *ep.site.Load() }

func (ep *primaryEndpoint) close() {
	select {
	case <-ep.stop:
	default:
		close(ep.stop)
	}
	<-ep.done
}

// ack is one write a client saw committed.
type ack struct {
	writer, n int
	site      string
	at        time.Time
}

// appWriters are application clients that insert into app.planned_w
// through the -primary endpoint, as the application account, and remember
// every write acknowledged to them.
type appWriters struct {
	e     *env
	ep    *primaryEndpoint
	mu    sync.Mutex
	acked []ack
	stop  chan struct{}
	wg    sync.WaitGroup
}

// createWriteTable makes the writers' table on the active site (it replicates).
func (e *env) createWriteTable(active string) {
	e.t.Helper()
	e.rootExec(active, "CREATE TABLE IF NOT EXISTS "+testbed.AppDatabase+
		".planned_w (writer INT NOT NULL, n INT NOT NULL, PRIMARY KEY (writer, n))")
}

func (e *env) startAppWriters(n int, ep *primaryEndpoint) *appWriters {
	w := &appWriters{e: e, ep: ep, stop: make(chan struct{})}
	for id := range n {
		w.wg.Go(func() { w.write(id) })
	}
	e.t.Cleanup(func() { w.halt() })
	return w
}

// write inserts rows (id, 0), (id, 1), ... A failed insert is not retried
// with the same number: it may have committed without an answer.
func (w *appWriters) write(id int) {
	var db *sql.DB
	dbSite := ""
	defer func() {
		if db != nil {
			_ = db.Close()
		}
	}()
	for n := 0; ; n++ {
		select {
		case <-w.stop:
			return
		default:
		}
		site := w.ep.current()
		if site == "" {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		if db == nil || dbSite != site {
			if db != nil {
				_ = db.Close()
			}
			db, _ = sql.Open("mysql", w.e.db.AppDSN(w.e.index(site)))
			db.SetMaxOpenConns(1)
			dbSite = site
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := db.ExecContext(ctx, "INSERT INTO planned_w (writer, n) VALUES (?, ?)", id, n)
		cancel()
		if err != nil {
			_ = db.Close()
			db = nil
			time.Sleep(5 * time.Millisecond)
			continue
		}
		w.mu.Lock()
		w.acked = append(w.acked, ack{writer: id, n: n, site: site, at: time.Now()})
		w.mu.Unlock()
	}
}

// snapshot is every write acknowledged so far.
func (w *appWriters) snapshot() []ack {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.acked)
}

// halt stops the writers (idempotent) and returns what they acknowledged.
func (w *appWriters) halt() []ack {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.wg.Wait()
	return w.snapshot()
}

// ackedOn counts acknowledged writes on site after t.
func (w *appWriters) ackedOn(site string, after time.Time) int {
	n := 0
	for _, a := range w.snapshot() {
		if a.site == site && a.at.After(after) {
			n++
		}
	}
	return n
}

// window is the write-unavailability window of a switchover from -> to
// that started at start: the last write acknowledged by from, to the first
// one acknowledged by to after start.
func (w *appWriters) window(from, to string, start time.Time) (time.Duration, bool) {
	var lastOld, firstNew time.Time
	for _, a := range w.snapshot() {
		switch {
		case a.site == from && a.at.After(lastOld):
			lastOld = a.at
		case a.site == to && a.at.After(start) && (firstNew.IsZero() || a.at.Before(firstNew)):
			firstNew = a.at
		}
	}
	return firstNew.Sub(lastOld), !lastOld.IsZero() && !firstNew.IsZero() && lastOld.After(start)
}

// missingOn lists acknowledged writes that site does not hold.
func (e *env) missingOn(site string, acked []ack) []ack {
	e.t.Helper()
	db, err := sql.Open("mysql", e.db.RootDSN(e.index(site)))
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	rows, err := db.QueryContext(e.t.Context(), "SELECT writer, n FROM "+testbed.AppDatabase+".planned_w")
	if err != nil {
		e.t.Fatalf("read writes on %s: %v", site, err)
	}
	defer func() { _ = rows.Close() }()
	have := map[[2]int]bool{}
	for rows.Next() {
		var k [2]int
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			e.t.Fatal(err)
		}
		have[k] = true
	}
	var missing []ack
	for _, a := range acked {
		if !have[[2]int{a.writer, a.n}] {
			missing = append(missing, a)
		}
	}
	return missing
}

// writerWatch samples every site's read_only while it runs and remembers
// any moment when more than one site accepted writes.
type writerWatch struct {
	stop, done chan struct{}
	mu         sync.Mutex
	both       []string
	samples    int
}

func (e *env) watchWriters() *writerWatch {
	ww := &writerWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(ww.done)
		for {
			var writers []string
			for _, s := range e.sites {
				if e.writable(s) {
					writers = append(writers, s)
				}
			}
			ww.mu.Lock()
			ww.samples++
			if len(writers) > 1 {
				ww.both = append(ww.both, strings.Join(writers, "+"))
			}
			ww.mu.Unlock()
			select {
			case <-ww.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	e.t.Cleanup(func() { ww.end() })
	return ww
}

// end stops the watch (idempotent) and returns the moments with two writers.
func (ww *writerWatch) end() []string {
	select {
	case <-ww.stop:
	default:
		close(ww.stop)
	}
	<-ww.done
	ww.mu.Lock()
	defer ww.mu.Unlock()
	return slices.Clone(ww.both)
}

// slowProbes makes every Status call of the operator's mysql Instances wait
// delay first: each pass then takes at least delay, which leaves a test
// time to act between two phases of a planned failover.
func slowProbes(delay time.Duration) func(*controller.Deps, *controller.Options) {
	return func(d *controller.Deps, o *controller.Options) {
		o.ProbeTimeout = delay + 3*time.Second
		d.Open = func(cfg mysql.Config) (mysql.Instance, error) {
			in, err := mysql.Open(cfg)
			if err != nil {
				return nil, err
			}
			return slowInstance{Instance: in, delay: delay}, nil
		}
	}
}

type slowInstance struct {
	mysql.Instance
	delay time.Duration
}

func (s slowInstance) Status(ctx context.Context) (mysql.Status, error) {
	select {
	case <-ctx.Done():
		return mysql.Status{}, ctx.Err()
	case <-time.After(s.delay):
	}
	return s.Instance.Status(ctx)
}

// assertEvents checks that the group has an Event of every reason.
func (e *env) assertEvents(reasons ...string) {
	e.t.Helper()
	for _, r := range reasons {
		e.eventually(5*time.Second, "event "+r, func() bool { return len(e.events(r)) > 0 })
	}
}

// noAcksLost fails the test when site lacks an acknowledged write.
func (e *env) noAcksLost(site string, acked []ack) {
	e.t.Helper()
	if missing := e.missingOn(site, acked); len(missing) > 0 {
		e.t.Fatalf("%d of %d acknowledged writes missing on %s, e.g. %+v", len(missing), len(acked), site, missing[0])
	}
}
