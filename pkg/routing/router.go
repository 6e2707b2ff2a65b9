package routing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
)

// Options tune what Converge renders. The zero value works except for OperatorURL.
type Options struct {
	// OperatorURL is the operator's /active-site base URL that sidecars ask,
	// e.g. http://bloodraven.bloodraven-system.svc:8081. Required.
	OperatorURL string
	// MySQLImage and SidecarImage, when set, replace spec.mysql.image and spec.sidecar.image.
	MySQLImage   string
	SidecarImage string
	// MysqldCommand and SidecarCommand, when set, replace the images' entrypoints.
	MysqldCommand  []string
	SidecarCommand []string
	// PeerURL gives the base URL a sidecar reaches a peer site's sidecar at.
	// Default: http://<SiteServiceHost>:8080.
	PeerURL func(namespace, group, site string) string
	// TerminationGracePeriod, when set, replaces spec.instance.stopDelay
	// as the site Pods' grace period and the sidecar's -stop-delay.
	TerminationGracePeriod time.Duration
	// CA, when set and not returning nil, turns on the authenticated
	// transport (tls.go): per-site certificate Secrets, HTTPS peers, and the
	// sidecar's separate health port.
	CA func() *pki.CA
	// Reclone, when set, lays site Pods out for a reclone (reclone.go);
	// it needs CA: without the authenticated transport it does nothing.
	Reclone *RecloneOptions
	// NetworkPolicy, when set, renders each group's NetworkPolicy (netpol.go).
	NetworkPolicy *NetworkPolicyOptions
	// Now is the clock certificates are issued by; default time.Now.
	Now func() time.Time
	// ViewKeys returns the PEM public keys sidecars accept (nil until the
	// operator loaded its signing key). When set, Converge writes them to the
	// group namespace's ViewKeysConfigMap before the Deployments.
	ViewKeys func() []byte
}

// Router makes and changes the Kubernetes objects of failover groups.
type Router struct {
	Client client.Client
	Scheme *runtime.Scheme
	opts   Options
	drift  driftCache // drift.go
}

// New returns a Router. The scheme must know core, apps, v1alpha1 and external-dns kinds.
func New(c client.Client, s *runtime.Scheme, opts Options) *Router {
	if opts.PeerURL == nil {
		opts.PeerURL = defaultPeerURL(opts.CA != nil)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Router{Client: c, Scheme: s, opts: opts}
}

func (r *Router) now() time.Time { return r.opts.Now() }

// Converge makes every object g's spec asks for, in dependency order:
// credentials Secrets (generated when absent, never overwritten), the init SQL
// Secret, each site's ConfigMap and Service, the role Services (-primary,
// -replicas and -any unless disabled, and spec.services.additional; role
// Services no longer asked for are deleted), with spec.dragonfly.enabled
// the cache's Deployments and Services (cache.go), each site's Deployment
// (created when absent; a change to an
// existing one is the ordered update's, rollout.go) and PVC, and the
// DNSEndpoint. It does not touch Pod role labels,
// DNS targets of an existing DNSEndpoint, or node taints: the failover
// sequence owns those through SetRoleLabels, PointDNS and TaintSite.
func (r *Router) Converge(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	if err := r.check(g); err != nil {
		return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
	}
	if err := r.ensureSecrets(ctx, g); err != nil {
		return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
	}
	if r.tlsEnabled() {
		if err := r.ensureSiteTLS(ctx, g); err != nil {
			return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
		}
	}
	creds, err := r.Credentials(ctx, g)
	if err != nil {
		return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
	}
	initSecret, err := r.renderInitSecret(g, creds)
	if err != nil {
		return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
	}
	if err := r.convergeViewKeys(ctx, g.Namespace); err != nil {
		return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
	}
	objs := []client.Object{initSecret}
	for _, s := range g.Spec.Sites {
		objs = append(objs, r.renderConfigMap(g, s), r.renderSiteService(g, s))
	}
	roleServices := r.renderRoleServices(g)
	for _, svc := range roleServices {
		objs = append(objs, svc)
	}
	objs = append(objs, r.renderCacheObjects(g)...)
	if r.opts.NetworkPolicy != nil {
		objs = append(objs, r.renderNetworkPolicy(g))
	}
	for _, o := range objs {
		if err := r.apply(ctx, g, o, true); err != nil {
			return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
		}
	}
	if err := r.pruneRoleServices(ctx, g, roleServices); err != nil {
		return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
	}
	for _, s := range g.Spec.Sites {
		if err := r.convergeDeployment(ctx, g, s); err != nil {
			return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
		}
		if err := r.convergePVC(ctx, g, s); err != nil {
			return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
		}
	}
	if err := r.convergeDNS(ctx, g); err != nil {
		return fmt.Errorf("converge %s/%s: %w", g.Namespace, g.Name, err)
	}
	return nil
}

// check refuses specs that would render broken objects.
func (r *Router) check(g *v1alpha1.MysqlFailoverGroup) error {
	if r.opts.OperatorURL == "" {
		return errors.New("routing.Options.OperatorURL is empty: sidecars need the operator's URL")
	}
	if len(g.Spec.Sites) == 0 {
		return errors.New("spec.sites is empty")
	}
	return checkServerIDs(g)
}

// apply writes obj with server-side apply under FieldOwner, forcing
// ownership. With owned, obj gets g as its controller owner. The server
// skips the write, and keeps the resourceVersion, when nothing changed.
func (r *Router) apply(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, obj client.Object, owned bool) error {
	_, err := r.applyWith(ctx, g, obj, owned)
	return err
}

// applyDry is apply as a server-side dry run: into gets what the server
// would have stored.
func (r *Router) applyDry(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, obj client.Object, into any) error {
	u, err := r.applyWith(ctx, g, obj, true, client.DryRunAll)
	if err != nil {
		return err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("dry run of %s: %w", obj.GetName(), err)
	}
	return nil
}

func (r *Router) applyWith(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, obj client.Object, owned bool,
	opts ...client.ApplyOption) (*unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(obj, r.Scheme)
	if err != nil {
		return nil, fmt.Errorf("apply %s: %w", obj.GetName(), err)
	}
	if owned {
		if err := controllerutil.SetControllerReference(g, obj, r.Scheme); err != nil {
			return nil, fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	delete(m, "status")
	pruneNulls(m)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	opts = append([]client.ApplyOption{client.FieldOwner(FieldOwner), client.ForceOwnership}, opts...)
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		return nil, fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return u, nil
}

// pruneNulls drops null values (creationTimestamp and friends) so that the
// apply request claims only fields this package sets.
func pruneNulls(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			pruneNulls(x)
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					pruneNulls(em)
				}
			}
		}
	}
}
