package load

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/miekg/dns"
)

// DialFunc opens a network connection, for example from inside the local
// cluster's client network.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Target says where a writer's next connection goes.
type Target interface {
	Addr(ctx context.Context) (string, error)
	String() string
}

// Fixed is a target with one address, such as the -primary Service.
type Fixed string

// Addr returns the address.
func (f Fixed) Addr(context.Context) (string, error) { return string(f), nil }
func (f Fixed) String() string                       { return string(f) }

// DNSName is a target resolved, at every new connection, by asking a DNS
// server for the name's A record over TCP: a client that resolves the name
// whenever it reconnects, without a cache of its own.
type DNSName struct {
	Server string // host:port of the DNS server
	Name   string // the name to resolve
	Port   int    // the port to connect to
	Dial   DialFunc
}

func (d DNSName) String() string { return d.Name }

// Addr resolves the name and returns the first A record with the port.
func (d DNSName) Addr(ctx context.Context) (string, error) {
	ips, err := d.Lookup(ctx)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(ips[0], strconv.Itoa(d.Port)), nil
}

// Lookup returns the name's A records.
func (d DNSName) Lookup(ctx context.Context) ([]string, error) {
	conn, err := d.Dial(ctx, "tcp", d.Server)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", d.Name, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(d.Name), dns.TypeA)
	co := &dns.Conn{Conn: conn}
	if err := co.WriteMsg(m); err != nil {
		return nil, fmt.Errorf("resolve %s: %w", d.Name, err)
	}
	r, err := co.ReadMsg()
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", d.Name, err)
	}
	var ips []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			ips = append(ips, a.A.String())
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no A record (rcode %s)", d.Name, dns.RcodeToString[r.Rcode])
	}
	return ips, nil
}
