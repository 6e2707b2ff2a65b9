package kubelet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
)

func (pr *Provider) container(ns, pod, name string) (*container, error) {
	r := pr.get(ns, pod)
	if r == nil {
		return nil, errdefs.NotFoundf("pod %s/%s is not on this node", ns, pod)
	}
	all := append(append([]*container{}, r.init...), r.main...)
	for _, c := range all {
		if c.spec.Name == name || (name == "" && len(r.main) == 1 && c == r.main[0]) {
			return c, nil
		}
	}
	return nil, errdefs.NotFoundf("pod %s/%s has no container %q", ns, pod, name)
}

// LogPath returns the file that holds a container's output.
func (pr *Provider) LogPath(ns, pod, name string) (string, error) {
	c, err := pr.container(ns, pod, name)
	if err != nil {
		return "", err
	}
	return c.logPath, nil
}

// GetContainerLogs serves kubectl logs from the container's log file.
func (pr *Provider) GetContainerLogs(ctx context.Context, ns, pod, name string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	c, err := pr.container(ns, pod, name)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(c.logPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read log: %w", err)
	}
	data = tailLines(data, opts.Tail)
	if opts.LimitBytes > 0 && len(data) > opts.LimitBytes {
		data = data[:opts.LimitBytes]
	}
	if !opts.Follow {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	pr2, pw := io.Pipe()
	go follow(ctx, c.logPath, int64(len(data)), data, pw)
	return pr2, nil
}

func tailLines(data []byte, n int) []byte {
	if n <= 0 {
		return data
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, nil)
}

// follow writes the initial data, then whatever is appended to path.
func follow(ctx context.Context, path string, _ int64, initial []byte, w *io.PipeWriter) {
	if _, err := w.Write(initial); err != nil {
		return
	}
	st, _ := os.Stat(path)
	var off int64
	if st != nil {
		off = st.Size()
	}
	for {
		select {
		case <-ctx.Done():
			w.Close()
			return
		case <-time.After(200 * time.Millisecond):
		}
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		_, _ = f.Seek(off, io.SeekStart)
		n, err := io.Copy(w, bufio.NewReader(f))
		f.Close()
		off += n
		if err != nil {
			return
		}
	}
}

// RunInContainer serves kubectl exec without a terminal.
func (pr *Provider) RunInContainer(ctx context.Context, ns, pod, name string, cmd []string, attach api.AttachIO) error {
	c, err := pr.container(ns, pod, name)
	if err != nil {
		return err
	}
	spec, err := c.execSpec(cmd)
	if err != nil {
		return err
	}
	hc, err := helperCmd(ctx, c.r.dir, spec)
	if err != nil {
		return err
	}
	hc.Stdin, hc.Stdout, hc.Stderr = attach.Stdin(), attach.Stdout(), attach.Stderr()
	if attach.Stdout() == nil {
		hc.Stdout = io.Discard
	}
	if attach.Stderr() == nil {
		hc.Stderr = hc.Stdout
	}
	return hc.Run()
}

// AttachToContainer is not supported.
func (pr *Provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errdefs.InvalidInput("attach is not supported by the process kubelet")
}

// GetStatsSummary returns an empty summary.
func (pr *Provider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return &statsv1alpha1.Summary{}, nil
}

// GetMetricsResource returns no metrics.
func (pr *Provider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) {
	return nil, nil
}

// PortForward connects stream to a port of the Pod.
func (pr *Provider) PortForward(ctx context.Context, ns, pod string, port int32, stream io.ReadWriteCloser) error {
	r := pr.get(ns, pod)
	if r == nil || r.ip() == "" {
		return errdefs.NotFoundf("pod %s/%s is not running on this node", ns, pod)
	}
	conn, err := nsutil.Dial(ctx, pr.cfg.CoreNetNS, "tcp", net.JoinHostPort(r.ip(), strconv.Itoa(int(port))))
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, stream); done <- struct{}{} }()
	go func() { _, _ = io.Copy(stream, conn); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}
