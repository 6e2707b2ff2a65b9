//go:build db

package mysql_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// proxy puts an embedded Toxiproxy link in front of server i.
func proxy(t *testing.T, s *sites, i int) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "mariadb", "127.0.0.1:0", s.c.Addr(i))
	if err := srv.Collection.Add(p, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// blackhole makes the link swallow everything, in both directions, without
// closing connections (a timeout toxic with timeout 0).
func blackhole(t *testing.T, p *toxiproxy.Proxy) {
	t.Helper()
	for _, stream := range []string{"upstream", "downstream"} {
		js := `{"name":"blackhole-` + stream + `","type":"timeout","stream":"` + stream + `","attributes":{"timeout":0}}`
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			t.Fatal(err)
		}
	}
}

// Every verb returns within its deadline over a blackholed link, whether it
// reuses a pooled connection or has to dial and handshake anew.
func TestBlackholedLinkReturnsWithinDeadline(t *testing.T) {
	s := startSites(t, 2)
	p := proxy(t, s, 1)
	pooled := operatorAt(t, s.c, p.Listen)
	if _, err := pooled.Status(ctxFor(t, 5*time.Second)); err != nil {
		t.Fatalf("through the healthy proxy: %v", err)
	}
	blackhole(t, p)
	fresh := operatorAt(t, s.c, p.Listen)
	primarySet := s.executed(t, 0)

	const deadline = 400 * time.Millisecond
	verbs := map[string]func(context.Context, mysql.Instance) error{
		"status": func(ctx context.Context, in mysql.Instance) error { _, err := in.Status(ctx); return err },
		"fence":  func(ctx context.Context, in mysql.Instance) error { return in.Fence(ctx) },
		"wait": func(ctx context.Context, in mysql.Instance) error {
			return in.WaitForGTID(ctx, primarySet, 10*time.Second)
		},
		"promote": func(ctx context.Context, in mysql.Instance) error {
			_, err := in.Promote(ctx, mysql.PromoteOptions{})
			return err
		},
	}
	var wg sync.WaitGroup
	for name, verb := range verbs {
		for label, in := range map[string]mysql.Instance{"pooled": pooled, "fresh": fresh} {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				start := time.Now()
				err := verb(ctx, in)
				took := time.Since(start)
				switch {
				case err == nil:
					t.Errorf("%s (%s) succeeded through a blackhole", name, label)
				case took > deadline+300*time.Millisecond:
					t.Errorf("%s (%s) took %s with a %s deadline: %v", name, label, took, deadline, err)
				case !errors.Is(err, mysql.ErrUnreachable):
					t.Errorf("%s (%s): %v, want ErrUnreachable", name, label, err)
				}
			})
		}
	}
	wg.Wait()
	// The server behind the proxy was never touched: still a healthy replica.
	if st := s.status(t, 1); st.Replica == nil || !st.Replica.Healthy() || st.Writable() {
		t.Fatalf("server behind the blackhole changed: %+v", st)
	}
}
