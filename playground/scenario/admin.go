package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/sidecar"
	"github.com/shipstream/bloodraven/playground/load"
)

// admin returns a client with the operator's own account (for replication
// and locks the scenarios need on a site), without a schema.
func (g *Group) admin(ctx context.Context) (*load.Client, error) {
	mg, err := g.Get(ctx)
	if err != nil {
		return nil, err
	}
	name := routing.CredentialSecretName(mg, routing.AccountOperator)
	var sec *corev1.Secret
	if sec, err = g.e.C.Client.CoreV1().Secrets(g.NS).Get(ctx, name, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("operator secret %s: %w", name, err)
	}
	acct := load.Account{User: string(sec.Data[routing.SecretKeyUsername]),
		Password: string(sec.Data[routing.SecretKeyPassword])}
	return g.client(acct, 5*time.Second), nil
}

// sidecarView asks a site's sidecar for its cached view, from /status on
// its plain-HTTP health port (the peer port speaks HTTPS).
func (g *Group) sidecarView(ctx context.Context, site string) (v1alpha1.ActiveSiteView, error) {
	var v v1alpha1.ActiveSiteView
	_, ip, err := g.Pod(ctx, site)
	if err != nil {
		return v, err
	}
	body, err := g.e.C.HTTPGet(ctx, net.JoinHostPort(ip, strconv.Itoa(routing.SidecarHealthPort)), sidecar.PathStatus)
	if err != nil {
		return v, err
	}
	var st sidecar.StatusReport
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		return v, fmt.Errorf("sidecar status of %s: %w", site, err)
	}
	if st.View == nil {
		return v, fmt.Errorf("sidecar of %s holds no view yet", site)
	}
	return *st.View, nil
}

// waitSidecarGeneration polls a site's sidecar every 100 ms until it holds
// generation gen, and returns when it first saw it.
func (g *Group) waitSidecarGeneration(ctx context.Context, site string, gen int64, within time.Duration) (time.Time, error) {
	deadline := time.Now().Add(within)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		v, err := g.sidecarView(cctx, site)
		cancel()
		if err == nil && v.Generation >= gen {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%s's sidecar holds generation %d (%v), want %d within %s", site, v.Generation, err, gen, within)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return time.Time{}, err
		}
	}
}

// condition returns the group's condition of a type.
func condition(mg *v1alpha1.MysqlFailoverGroup, typ string) (metav1.Condition, bool) {
	for _, c := range mg.Status.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return metav1.Condition{}, false
}

// events lists the group namespace's Events whose reason contains match.
func (g *Group) events(ctx context.Context, match string) string {
	evs, err := g.e.C.Client.CoreV1().Events(g.NS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, ev := range evs.Items {
		if strings.Contains(ev.Reason, match) {
			out = append(out, ev.Reason+": "+ev.Message)
		}
	}
	return strings.Join(out, "; ")
}
