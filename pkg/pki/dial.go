package pki

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// Expectation names the identity a client expects at addr (host:port), as
// dialed for a request with ctx. An error refuses the dial.
type Expectation func(ctx context.Context, addr string) (Identity, error)

// DialTLS returns an http.Transport DialTLSContext: it connects to addr,
// presents src's certificate and accepts the server only when it proves
// the identity want names for that address. A connection is reused only
// for the same address, so it is never reused for another identity as
// long as want maps each address to one identity.
func DialTLS(src Source, want Expectation, now func() time.Time) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		id, err := want(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		conn := tls.Client(raw, ClientConfig(src, id, now))
		if err := conn.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, fmt.Errorf("tls %s: %w", addr, err)
		}
		return conn, nil
	}
}

type identityKey struct{}

// WithIdentity marks ctx with the identity a request made with it must
// reach (ExpectFromContext reads it).
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// ExpectFromContext is an Expectation that reads the identity WithIdentity
// put on the request's context; a request without one is refused.
func ExpectFromContext(ctx context.Context, addr string) (Identity, error) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	if !ok || id.Kind == KindNone {
		return Identity{}, fmt.Errorf("%w: no identity expected for %s", ErrWrongIdentity, addr)
	}
	return id, nil
}
