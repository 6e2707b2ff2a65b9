package sidecar

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// maxViewBody bounds how much of an answer is read: a view is a few hundred bytes.
const maxViewBody = 64 << 10

// Peer is another site's sidecar.
type Peer struct {
	// Name is the peer's site; it appears as "peer/<Name>" in views and metrics.
	Name string
	// URL is the peer sidecar's base URL, e.g. http://orders-pdx.shop.svc:8080.
	URL string
}

// Report is what a sidecar tells the operator about itself on every GET /active-site.
type Report struct {
	Site       string
	Generation int64
	DB         DBState
	// Boot is this sidecar process's random id.
	Boot string
	// ExecutableHash is the SHA-256 (hex) of the sidecar's binary, "" when unknown.
	ExecutableHash string
	// View echoes the last view received directly from the operator before
	// the mysqld read DB comes from; empty before any.
	View Echo
}

// Query renders the report as the query of GET /active-site. A mysqld in an
// unknown state reports neither fenced nor mysqld: guessing either could let
// the operator confirm a fence that did not happen.
func (r Report) Query(namespace, group string) url.Values {
	q := url.Values{}
	q.Set(v1alpha1.QueryNamespace, namespace)
	q.Set(v1alpha1.QueryGroup, group)
	q.Set(v1alpha1.QuerySite, r.Site)
	q.Set(v1alpha1.QueryGeneration, strconv.FormatInt(r.Generation, 10))
	switch r.DB {
	case DBWritable, DBReadOnly:
		q.Set(v1alpha1.QueryFenced, strconv.FormatBool(r.DB == DBReadOnly))
		q.Set(v1alpha1.QueryMysqld, "up")
	case DBDown:
		q.Set(v1alpha1.QueryMysqld, "down")
	}
	if r.Boot != "" {
		q.Set(v1alpha1.QueryBoot, r.Boot)
	}
	if r.ExecutableHash != "" {
		q.Set(v1alpha1.QueryExecutableHash, r.ExecutableHash)
	}
	// The operator counts the echo by its Seq; an operator from before Seq
	// reads viewObservedAt instead, and refuses viewOperator without it.
	if e := r.View; e.Operator != "" && !e.ObservedAt.IsZero() {
		q.Set(v1alpha1.QueryViewOperator, e.Operator)
		q.Set(v1alpha1.QueryViewObservedAt, e.ObservedAt.UTC().Format(time.RFC3339Nano))
		if e.Seq > 0 {
			q.Set(v1alpha1.QueryViewSeq, strconv.FormatInt(e.Seq, 10))
		}
	}
	return q
}

// Gatherer asks the operator (GET /active-site with the report) and every
// peer (GET /peer/active-site) for their views, and returns when all have
// answered or given up. Each answer is handed to arrived as it comes in, in
// the caller's goroutine, so arrived may touch what the caller owns without
// locking against Gather; peer is "" for the operator. arrived may be nil.
// The HTTP(S) fetcher is the sidecar binary's; a simulation brings its own
// network (Config.Gatherer).
type Gatherer interface {
	Gather(ctx context.Context, rep Report, arrived func(peer string, r Reply)) (Reply, []PeerReply)
}

// fetcher asks the operator and the peers for their views, all at once,
// each request bounded by timeout.
type fetcher struct {
	client    *http.Client
	timeout   time.Duration
	operator  string // base URL
	peers     []Peer
	namespace string
	group     string
}

// newHTTPClient is a client with a small pool that outlives the period of
// the loop, so every tick reuses its connections, and no proxy from the
// environment: the operator and the peers are cluster Services.
func newHTTPClient(period time.Duration) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        16,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     3*period + 30*time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
}

// Gather implements Gatherer: every view fetched in parallel, each request
// bounded by the timeout (the requests only send their answers on a
// channel, and arrived runs in the caller's goroutine).
func (f *fetcher) Gather(ctx context.Context, rep Report, arrived func(peer string, r Reply)) (Reply, []PeerReply) {
	type answer struct {
		i int // -1 for the operator, else the index in peers
		r Reply
	}
	var (
		op    Reply
		peers = make([]PeerReply, len(f.peers))
		// Buffered for every request, so none blocks while arrived runs (a fence).
		answers = make(chan answer, len(f.peers)+1)
	)
	go func() { answers <- answer{-1, f.get(ctx, f.operatorURL(rep), false)} }()
	for i, p := range f.peers {
		peers[i].Peer = p.Name
		go func() {
			answers <- answer{i, f.get(ctx, strings.TrimRight(p.URL, "/")+v1alpha1.PathPeerActiveSite, true)}
		}()
	}
	for range len(f.peers) + 1 {
		a := <-answers
		peer := ""
		if a.i < 0 {
			op = a.r
		} else {
			peers[a.i].Reply, peer = a.r, peers[a.i].Peer
		}
		if arrived != nil {
			arrived(peer, a.r)
		}
	}
	return op, peers
}

func (f *fetcher) operatorURL(rep Report) string {
	return strings.TrimRight(f.operator, "/") + v1alpha1.PathActiveSite + "?" + rep.Query(f.namespace, f.group).Encode()
}

// get fetches one view. Transport failures and timeouts come back as
// ReplyNone wrapping ErrUnreachable.
func (f *fetcher) get(ctx context.Context, u string, fromPeer bool) Reply {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Reply{Err: fmt.Errorf("GET %s: %w: %w", u, ErrUnreachable, err)}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return Reply{Err: fmt.Errorf("%w: %w", ErrUnreachable, err)}
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxViewBody))
	if err != nil {
		return Reply{Err: fmt.Errorf("GET %s: read body: %w: %w", u, ErrUnreachable, err)}
	}
	return Classify(resp.StatusCode, body, fromPeer)
}
