package install

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/playground/load"
	"github.com/shipstream/bloodraven/playground/localcluster"
)

// Writer is a small application: it inserts rows into the group's
// application schema through the group's DNS name, resolving it again on
// every new connection, from the cluster's "clients" address (so the
// "clients" fault target applies to it). Every Every it prints one line:
// writes acknowledged and failed, and the site that answered.
type Writer struct {
	Namespace, Group, Hostname string
	Writers                    int           // concurrent writers (default 1)
	Pause                      time.Duration // between one writer's inserts (default 200ms)
	Every                      time.Duration // report period (default 5s)
	Out                        io.Writer
}

// Run writes until ctx ends.
func (w Writer) Run(ctx context.Context, c *localcluster.Cluster) error {
	w.defaults()
	client, err := w.client(ctx, c)
	if err != nil {
		return err
	}
	if w.Hostname == "" {
		return fmt.Errorf("group %s/%s publishes no DNS name (spec.dns.hostname)", w.Namespace, w.Group)
	}
	target := load.DNSName{Server: net.JoinHostPort(c.Info.DNSServer, "53"), Name: w.Hostname,
		Port: routing.MySQLPort, Dial: c.Dial}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err = load.Setup(sctx, client, target)
	cancel()
	if err != nil {
		return fmt.Errorf("writer tables: %w", err)
	}
	fmt.Fprintf(w.Out, "%s writer: %d writer(s) into %s.%s through %s, a line every %s\n", stamp(),
		w.Writers, client.Account.Database, load.LoadTable, w.Hostname, w.Every)
	st := &writerStats{out: w.Out}
	go st.report(ctx, w.Out, w.Every)
	ws := &load.Writers{Client: client, Target: target, IDs: load.NewIDs(), N: w.Writers, Pause: w.Pause, OnAttempt: st.add}
	for ctx.Err() == nil {
		// Writers keep every attempt: run in rounds so a long-lived writer
		// does not grow without bound.
		rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		ws.Run(rctx)
		cancel()
	}
	return nil
}

func (w *Writer) defaults() {
	if w.Writers == 0 {
		w.Writers = 1
	}
	if w.Pause == 0 {
		w.Pause = 200 * time.Millisecond
	}
	if w.Every == 0 {
		w.Every = 5 * time.Second
	}
	if w.Out == nil {
		w.Out = io.Discard
	}
}

// client reads the group's application account from its Secret, and the
// group's DNS name when Hostname is empty.
func (w *Writer) client(ctx context.Context, c *localcluster.Cluster) (*load.Client, error) {
	mg, err := Get(ctx, c, w.Namespace, w.Group)
	if err != nil {
		return nil, err
	}
	if w.Hostname == "" {
		w.Hostname = mg.Spec.DNS.Hostname
	}
	name := routing.CredentialSecretName(mg, routing.AccountApplication)
	sec, err := c.Client.CoreV1().Secrets(w.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("application secret %s: %w", name, err)
	}
	acct := load.Account{User: string(sec.Data[routing.SecretKeyUsername]),
		Password: string(sec.Data[routing.SecretKeyPassword]), Database: string(sec.Data[routing.SecretKeyDatabase])}
	if acct.Database == "" {
		acct.Database = routing.DefaultAppDatabase
	}
	sites := map[uint32]string{}
	for _, s := range mg.Spec.Sites {
		sites[routing.ServerID(s.Name)] = s.Name
	}
	return &load.Client{Dial: c.Dial, Account: acct, ServerSites: sites, Timeout: 2 * time.Second}, nil
}

// FirstAck starts the line the writer prints at its first acknowledged write.
const FirstAck = "writer: first write acknowledged"

// writerStats counts attempts between two report lines.
type writerStats struct {
	out      io.Writer
	mu       sync.Mutex
	acked    bool
	ok, fail int
	sites    map[string]int
	firstErr string
}

func (s *writerStats) add(a load.Attempt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.OK {
		if !s.acked {
			s.acked = true
			fmt.Fprintf(s.out, "%s %s by %s (%s)\n", stamp(), FirstAck, a.Site, a.Addr)
		}
		s.ok++
		if s.sites == nil {
			s.sites = map[string]int{}
		}
		s.sites[a.Site]++
		return
	}
	s.fail++
	if s.firstErr == "" {
		s.firstErr = a.Err
	}
}

func (s *writerStats) report(ctx context.Context, out io.Writer, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		line := fmt.Sprintf("%s writes: %d acknowledged, %d failed", stamp(), s.ok, s.fail)
		if len(s.sites) > 0 {
			line += "; answered by " + countList(s.sites)
		}
		if s.firstErr != "" {
			line += "; first error: " + s.firstErr
		}
		s.ok, s.fail, s.sites, s.firstErr = 0, 0, nil, ""
		s.mu.Unlock()
		fmt.Fprintln(out, line)
	}
}

// countList formats counts by name as "a 3, b 1", sorted by name.
func countList(m map[string]int) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, m[n])
	}
	return strings.Join(parts, ", ")
}

func stamp() string { return time.Now().Format("15:04:05") }
