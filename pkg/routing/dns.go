package routing

import (
	"context"
	"fmt"
	"net"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	externaldns "sigs.k8s.io/external-dns/apis/v1alpha1"
	"sigs.k8s.io/external-dns/endpoint"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// SiteAddress is the address DNS publishes for a site: its LoadBalancerIP
// when set, else the cluster IP of its Service.
func (r *Router) SiteAddress(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) (string, error) {
	s, err := findSite(g, site)
	if err != nil {
		return "", err
	}
	if s.LoadBalancerIP != "" {
		return s.LoadBalancerIP, nil
	}
	var svc corev1.Service
	key := client.ObjectKey{Namespace: g.Namespace, Name: SiteName(g.Name, site)}
	if err := r.Client.Get(ctx, key, &svc); err != nil {
		return "", fmt.Errorf("site address %s: service %s: %w", site, key.Name, err)
	}
	ip := svc.Spec.ClusterIP
	if ip == "" || ip == corev1.ClusterIPNone {
		return "", fmt.Errorf("site address %s: service %s has no cluster IP yet", site, key.Name)
	}
	return ip, nil
}

// InitialSite is the site a new group starts on: status.activeSite, else
// topology's bootstrap choice (the first primary-candidate in spec order).
func InitialSite(g *v1alpha1.MysqlFailoverGroup) string {
	if g.Status.ActiveSite != "" {
		return g.Status.ActiveSite
	}
	return topology.BootstrapSite(g.Spec.Sites)
}

// recordType is A for IPv4 targets and AAAA for IPv6 ones.
func recordType(addr string) string {
	if ip := net.ParseIP(addr); ip != nil && ip.To4() == nil {
		return "AAAA"
	}
	return "A"
}

func (r *Router) renderDNSEndpoint(g *v1alpha1.MysqlFailoverGroup, target string) *externaldns.DNSEndpoint {
	d := g.Spec.DNS
	return &externaldns.DNSEndpoint{
		ObjectMeta: metav1.ObjectMeta{Name: DNSEndpointName(g.Name), Namespace: g.Namespace, Labels: groupLabels(g)},
		Spec: externaldns.DNSEndpointSpec{Endpoints: []*endpoint.Endpoint{{
			DNSName:    d.Hostname,
			RecordType: recordType(target),
			RecordTTL:  endpoint.TTL(d.TTL),
			Targets:    endpoint.Targets{target},
		}}},
	}
}

// getDNSEndpoint returns the group's DNSEndpoint, or nil when there is none.
func (r *Router) getDNSEndpoint(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) (*externaldns.DNSEndpoint, error) {
	var ep externaldns.DNSEndpoint
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: DNSEndpointName(g.Name)}, &ep)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get dnsendpoint %s: %w", DNSEndpointName(g.Name), err)
	}
	return &ep, nil
}

// currentTarget is the single target of ep's record, or "" when it has none.
func currentTarget(ep *externaldns.DNSEndpoint) string {
	if ep == nil || len(ep.Spec.Endpoints) != 1 || len(ep.Spec.Endpoints[0].Targets) != 1 {
		return ""
	}
	return ep.Spec.Endpoints[0].Targets[0]
}

// convergeDNS makes the DNSEndpoint spec.dns asks for, keeping the target an
// existing one has (PointDNS owns it), or deletes ours when spec.dns is nil.
func (r *Router) convergeDNS(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	ep, err := r.getDNSEndpoint(ctx, g)
	if err != nil {
		return err
	}
	if g.Spec.DNS == nil {
		if ep == nil || !metav1.IsControlledBy(ep, g) {
			return nil
		}
		if err := r.Client.Delete(ctx, ep); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete dnsendpoint %s: %w", ep.Name, err)
		}
		return nil
	}
	target := currentTarget(ep)
	if target == "" {
		if target, err = r.SiteAddress(ctx, g, InitialSite(g)); err != nil {
			return fmt.Errorf("dnsendpoint: %w", err)
		}
	}
	return r.apply(ctx, g, r.renderDNSEndpoint(g, target), true)
}

// PointDNS sets the DNSEndpoint's target to site's address and reports
// whether it changed anything. It is a no-op when spec.dns is nil.
func (r *Router) PointDNS(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) (bool, error) {
	if g.Spec.DNS == nil {
		return false, nil
	}
	addr, err := r.SiteAddress(ctx, g, site)
	if err != nil {
		return false, fmt.Errorf("point dns %s: %w", site, err)
	}
	ep, err := r.getDNSEndpoint(ctx, g)
	if err != nil {
		return false, fmt.Errorf("point dns %s: %w", site, err)
	}
	want := r.renderDNSEndpoint(g, addr)
	if ep != nil && slices.EqualFunc(ep.Spec.Endpoints, want.Spec.Endpoints, sameEndpoint) {
		return false, nil
	}
	if err := r.apply(ctx, g, want, true); err != nil {
		return false, fmt.Errorf("point dns %s: %w", site, err)
	}
	return true, nil
}

func sameEndpoint(a, b *endpoint.Endpoint) bool {
	return a.DNSName == b.DNSName && a.RecordType == b.RecordType &&
		a.RecordTTL == b.RecordTTL && slices.Equal(a.Targets, b.Targets)
}
