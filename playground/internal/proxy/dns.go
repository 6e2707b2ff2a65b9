package proxy

import (
	"context"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
)

// DNS answers A queries for <service>.<namespace>.svc.<domain> from the
// Service listers, and forwards every other query to Upstream.
type DNS struct {
	Proxy    *Proxy
	Domain   string // cluster.local
	NetNS    string // where Upstream is reachable
	Upstream string // host:port of BIND
	servers  []*dns.Server
}

// Serve listens on addr (udp and tcp) inside the core namespace.
func (d *DNS) Serve(addr string) error {
	pc, err := nsutil.ListenPacket(d.NetNS, "udp", addr)
	if err != nil {
		return err
	}
	l, err := nsutil.Listen(d.NetNS, "tcp", addr)
	if err != nil {
		pc.Close()
		return err
	}
	d.servers = []*dns.Server{{PacketConn: pc, Handler: d}, {Listener: l, Handler: d}}
	for _, s := range d.servers {
		go func() { _ = s.ActivateAndServe() }()
	}
	return nil
}

// Close stops the servers.
func (d *DNS) Close() {
	for _, s := range d.servers {
		_ = s.Shutdown()
	}
}

// ServeDNS implements dns.Handler.
func (d *DNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	if len(req.Question) == 1 {
		q := req.Question[0]
		suffix := ".svc." + strings.TrimSuffix(d.Domain, ".") + "."
		if strings.HasSuffix(strings.ToLower(q.Name), suffix) {
			_ = w.WriteMsg(d.answerService(req, q, strings.TrimSuffix(strings.ToLower(q.Name), suffix)))
			return
		}
	}
	resp, err := d.forward(req)
	if err != nil {
		m := new(dns.Msg)
		m.SetRcode(req, dns.RcodeServerFailure)
		_ = w.WriteMsg(m)
		return
	}
	_ = w.WriteMsg(resp)
}

func (d *DNS) answerService(req *dns.Msg, q dns.Question, rest string) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	parts := strings.Split(rest, ".")
	if len(parts) != 2 {
		m.SetRcode(req, dns.RcodeNameError)
		return m
	}
	ips := d.serviceIPs(parts[1], parts[0])
	if ips == nil {
		m.SetRcode(req, dns.RcodeNameError)
		return m
	}
	if q.Qtype != dns.TypeA && q.Qtype != dns.TypeANY {
		return m // the name exists, with no records of this type
	}
	for _, ip := range ips {
		rr := &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1}, A: net.ParseIP(ip)}
		m.Answer = append(m.Answer, rr)
	}
	return m
}

// serviceIPs returns the ClusterIP, or the ready endpoints of a headless
// Service; nil when the Service does not exist.
func (d *DNS) serviceIPs(ns, name string) []string {
	svc, err := d.Proxy.Services().Services(ns).Get(name)
	if err != nil {
		return nil
	}
	if svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		return []string{svc.Spec.ClusterIP}
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name})
	slices, _ := d.Proxy.Slices().EndpointSlices(ns).List(sel)
	ips := []string{}
	for _, s := range slices {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				ips = append(ips, ep.Addresses...)
			}
		}
	}
	return ips
}

func (d *DNS) forward(req *dns.Msg) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := nsutil.Dial(ctx, d.NetNS, "udp", d.Upstream)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	conn := &dns.Conn{Conn: c}
	if err := conn.WriteMsg(req); err != nil {
		return nil, err
	}
	return conn.ReadMsg()
}
