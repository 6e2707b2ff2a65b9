package scenario

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/pkg/routing"
)

// counter is one metric of a program, summed over its labels.
type counter struct {
	Name  string
	Found bool    // the program exports the metric
	Sum   float64 // over every label set
	From  string  // the URL it was read from
}

func (c counter) String() string {
	if !c.Found {
		return c.Name + " not exported"
	}
	return fmt.Sprintf("%s %g (%s)", c.Name, c.Sum, c.From)
}

// scrape reads the metric name from a Pod's /metrics, trying each of its
// containers' ports over plain HTTP and then HTTPS (any certificate: the
// scenario only reads). It returns the first port that serves Prometheus
// text; Found says whether the metric was there.
func (e *Env) scrape(ctx context.Context, pod *corev1.Pod, name string) (counter, error) {
	c := counter{Name: name}
	var errs []string
	for _, ct := range pod.Spec.Containers {
		for _, p := range ct.Ports {
			if p.ContainerPort == routing.MySQLPort {
				continue // failed handshakes would get the clients address blocked
			}
			for _, scheme := range []string{"http", "https"} {
				u := fmt.Sprintf("%s://%s/metrics", scheme, net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(p.ContainerPort))))
				body, err := e.fetchMetrics(ctx, u)
				if err != nil {
					errs = append(errs, err.Error())
					continue
				}
				c.From = u
				c.Sum, c.Found = sumMetric(body, name)
				return c, nil
			}
		}
	}
	return c, fmt.Errorf("no /metrics on Pod %s/%s: %s", pod.Namespace, pod.Name, strings.Join(errs, "; "))
}

func (e *Env) fetchMetrics(ctx context.Context, u string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	tr := &http.Transport{DialContext: e.C.Dial, DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // reading metrics of a test cluster
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "# TYPE") {
		return "", fmt.Errorf("GET %s: status %d, not Prometheus text", u, resp.StatusCode)
	}
	return string(b), nil
}

// sumMetric adds up the samples of name (a counter, with any labels).
func sumMetric(body, name string) (float64, bool) {
	var sum float64
	found := false
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || strings.HasPrefix(line, "#") || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		f := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

// operatorPodObject returns the operator's running Pod.
func (e *Env) operatorPodObject(ctx context.Context) (*corev1.Pod, error) {
	name, err := e.OperatorPod(ctx)
	if err != nil {
		return nil, err
	}
	return e.C.Client.CoreV1().Pods("bloodraven-system").Get(ctx, name, metav1.GetOptions{})
}

// sitePodObject returns a site's running Pod.
func (g *Group) sitePodObject(ctx context.Context, site string) (*corev1.Pod, error) {
	name, _, err := g.Pod(ctx, site)
	if err != nil {
		return nil, err
	}
	return g.e.C.Client.CoreV1().Pods(g.NS).Get(ctx, name, metav1.GetOptions{})
}
