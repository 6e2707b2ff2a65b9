package scenario

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/pkg/protocol"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// operatorNamespace is where the chart installs the operator and where it
// keeps its view-signing Secret.
const operatorNamespace = "bloodraven-system"

// signingKeys reads the operator's view-signing Secret: the private key it
// signs with, and the extra public key it publishes, if any.
func (e *Env) signingKeys(ctx context.Context) (ed25519.PrivateKey, []ed25519.PublicKey, error) {
	sec, err := e.C.Client.CoreV1().Secrets(operatorNamespace).Get(ctx, routing.ViewSigningSecret, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("secret %s/%s: %w", operatorNamespace, routing.ViewSigningSecret, err)
	}
	priv, err := protocol.ParsePrivateKey(sec.Data[routing.ViewSigningKey])
	if err != nil {
		return nil, nil, fmt.Errorf("secret %s: %w", routing.ViewSigningSecret, err)
	}
	var extra []ed25519.PublicKey
	if raw := sec.Data[routing.ViewAcceptedKey]; len(raw) > 0 {
		if extra, err = protocol.ParsePublicKeys(raw); err != nil {
			return nil, nil, fmt.Errorf("secret %s: %w", routing.ViewSigningSecret, err)
		}
	}
	return priv, extra, nil
}

// patchSigningSecret sets the given keys of the view-signing Secret; a nil
// value removes the key.
func (e *Env) patchSigningSecret(ctx context.Context, data map[string][]byte) error {
	patch, err := json.Marshal(map[string]any{"data": data}) // []byte becomes base64, nil becomes null
	if err != nil {
		return err
	}
	_, err = e.C.Client.CoreV1().Secrets(operatorNamespace).Patch(ctx, routing.ViewSigningSecret,
		types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("patch secret %s/%s: %w", operatorNamespace, routing.ViewSigningSecret, err)
	}
	return nil
}

// newViewKey makes a new Ed25519 view key and its PEMs, private and public.
func newViewKey() (ed25519.PrivateKey, []byte, []byte, error) {
	priv, err := protocol.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	privPEM, err := protocol.EncodePrivateKey(priv)
	if err != nil {
		return nil, nil, nil, err
	}
	pubPEM, err := protocol.EncodePublicKeys(priv.Public().(ed25519.PublicKey))
	return priv, privPEM, pubPEM, err
}

// sidecarStatus reads a site's sidecar's /status from its plain-HTTP
// health port.
func (g *Group) sidecarStatus(ctx context.Context, site string) (sidecar.StatusReport, error) {
	var st sidecar.StatusReport
	_, ip, err := g.Pod(ctx, site)
	if err != nil {
		return st, err
	}
	body, err := g.e.C.HTTPGet(ctx, net.JoinHostPort(ip, strconv.Itoa(routing.SidecarHealthPort)), sidecar.PathStatus)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		return st, fmt.Errorf("sidecar status of %s: %w", site, err)
	}
	return st, nil
}

// sidecarStatuses reads every site's sidecar's /status.
func (g *Group) sidecarStatuses(ctx context.Context) (map[string]sidecar.StatusReport, error) {
	out := map[string]sidecar.StatusReport{}
	for _, s := range g.Sites {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := g.sidecarStatus(cctx, s)
		cancel()
		if err != nil {
			return out, err
		}
		out[s] = st
	}
	return out, nil
}

// waitSidecars polls every sidecar's /status every 200 ms until cond holds
// for all of them at once, and returns when it first did.
func (g *Group) waitSidecars(ctx context.Context, what string, within time.Duration,
	cond func(sidecar.StatusReport) error) (time.Time, error) {
	deadline := time.Now().Add(within)
	for {
		sts, err := g.sidecarStatuses(ctx)
		if err == nil {
			for _, s := range g.Sites {
				if cerr := cond(sts[s]); cerr != nil {
					err = fmt.Errorf("%s: %w", s, cerr)
					break
				}
			}
		}
		if err == nil {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%s: not within %s: %w", what, within, err)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return time.Time{}, err
		}
	}
}

// keysAre is a condition on a sidecar: it accepts exactly ids.
func keysAre(ids ...string) func(sidecar.StatusReport) error {
	want := slices.Sorted(slices.Values(ids))
	return func(st sidecar.StatusReport) error {
		if got := slices.Sorted(slices.Values(st.ViewKeys)); !slices.Equal(got, want) {
			return fmt.Errorf("viewKeys %v, want %v", got, want)
		}
		return nil
	}
}

// viewSignedBy is a condition on a sidecar: it holds a view signed with id.
func viewSignedBy(id string) func(sidecar.StatusReport) error {
	return func(st sidecar.StatusReport) error {
		if st.View == nil || st.View.KeyID != id {
			got := "no view"
			if st.View != nil {
				got = "keyID " + st.View.KeyID
			}
			return fmt.Errorf("holds %s, want keyID %s", got, id)
		}
		return nil
	}
}

// rejectedViews reads a site's sidecar's refused views, by reason, from its
// health port's /metrics. A counter not exported yet reads as no refusal.
func (g *Group) rejectedViews(ctx context.Context, site string) (map[string]float64, error) {
	_, ip, err := g.Pod(ctx, site)
	if err != nil {
		return nil, err
	}
	u := "http://" + net.JoinHostPort(ip, strconv.Itoa(routing.SidecarHealthPort)) + sidecar.PathMetrics
	body, err := g.e.fetchMetrics(ctx, u)
	if err != nil {
		return nil, err
	}
	return metricByLabel(body, sidecar.MetricRejectedViews, "reason"), nil
}

// metricByLabel returns the samples of a counter by the value of one label.
func metricByLabel(body, name, label string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "}")
		if !ok {
			continue
		}
		f := strings.Fields(value)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(labels, ",") {
			if k, val, ok := strings.Cut(kv, "="); ok && k == label {
				out[strings.Trim(val, `"`)] += v
			}
		}
	}
	return out
}
