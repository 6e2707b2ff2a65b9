package reclone

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/shipstream/bloodraven/pkg/pki"
)

// Client is the operator's end: it posts a phase to a site's sidecar over
// mutual TLS, presenting the operator's certificate and checking the
// site's identity.
type Client struct {
	// URL is a site's sidecar base URL (its peer port).
	URL func(namespace, group, site string) string
	// HTTP, when set, replaces the client built from Credentials (tests).
	HTTP *http.Client
	// Timeout bounds one call (default 10 s): a call only starts work.
	Timeout time.Duration
}

// NewClient returns a Client over url presenting creds (nil: plain HTTP,
// which every sidecar refuses).
func NewClient(url func(namespace, group, site string) string, creds pki.Source) *Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute}
	if creds != nil {
		tr.DialTLSContext = pki.DialTLS(creds, pki.ExpectFromContext, time.Now)
	}
	return &Client{URL: url, HTTP: &http.Client{Transport: tr}}
}

// Do asks site's sidecar for q. A refusal is an error wrapping ErrRefused
// (its Answer carries the reason); a sidecar without the endpoint (404)
// is ErrUnsupported; a transport error is returned as it is.
func (c *Client) Do(ctx context.Context, namespace, group, site string, q Request) (Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(c.Timeout, 10*time.Second))
	defer cancel()
	ctx = pki.WithIdentity(ctx, pki.SiteIdentity(namespace, group, site))
	body, err := json.Marshal(q)
	if err != nil {
		return Answer{}, fmt.Errorf("reclone: encode: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL(namespace, group, site)+PathReclone, bytes.NewReader(body))
	if err != nil {
		return Answer{}, fmt.Errorf("reclone %s/%s/%s: %w", namespace, group, site, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("reclone %s/%s/%s: %w", namespace, group, site, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode == http.StatusNotFound {
		return Answer{}, fmt.Errorf("%w: %s/%s/%s: %s", ErrUnsupported, namespace, group, site, resp.Status)
	}
	var a Answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return Answer{}, fmt.Errorf("reclone %s/%s/%s: %s: unreadable answer: %w", namespace, group, site, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return a, fmt.Errorf("%w by %s/%s/%s: %s: %s: %s", ErrRefused, namespace, group, site, resp.Status, a.Reason, a.Error)
	}
	return a, nil
}
