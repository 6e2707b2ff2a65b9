package kubelet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/shipstream/bloodraven/playground/internal/podexec"
)

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// env is the container's environment: defaults, the service variables for
// the API server, the Pod's identity, then the container's own variables
// (already resolved by virtual-kubelet), which win.
func (c *container) env(pod *corev1.Pod, sb *sandbox) []string {
	cfg := c.r.pr.cfg
	vars := [][2]string{
		{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		{"HOME", "/root"},
		{"HOSTNAME", hostname(pod)},
		{"KUBERNETES_SERVICE_HOST", cfg.APIHost},
		{"KUBERNETES_SERVICE_PORT", cfg.APIPort},
		{"KUBERNETES_PORT", fmt.Sprintf("tcp://%s:%s", cfg.APIHost, cfg.APIPort)},
		{"POD_IP", sb.ip.String()},
		{"POD_NAME", pod.Name},
		{"POD_NAMESPACE", pod.Namespace},
		{"NODE_NAME", cfg.Node},
	}
	podIPRefs := c.r.pr.statusFieldRefs(pod, c.spec.Name)
	for _, e := range c.spec.Env {
		v := e.Value
		switch podIPRefs[e.Name] {
		case "status.podIP", "status.podIPs":
			v = sb.ip.String()
		case "status.hostIP", "status.hostIPs":
			v = cfg.NodeIP.String()
		}
		vars = append(vars, [2]string{e.Name, v})
	}
	return dedupe(vars)
}

func dedupe(vars [][2]string) []string {
	idx := map[string]int{}
	var out []string
	for _, kv := range vars {
		s := kv[0] + "=" + kv[1]
		if i, ok := idx[kv[0]]; ok {
			out[i] = s
			continue
		}
		idx[kv[0]] = len(out)
		out = append(out, s)
	}
	return out
}

// mounts lists the binds of the container: its volume mounts, the Pod's
// network files and /tmp, and the image's private folders.
func (c *container) mounts(sb *sandbox, vols map[string]string, img Image) ([]podexec.Mount, error) {
	var ms []podexec.Mount
	targets := map[string]bool{}
	for _, vm := range c.spec.VolumeMounts {
		src, ok := vols[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume mount %q names no volume of the pod", vm.Name)
		}
		if vm.SubPath != "" {
			src = filepath.Join(src, filepath.Clean("/"+vm.SubPath))
			if _, err := os.Stat(src); os.IsNotExist(err) {
				if err := os.MkdirAll(src, 0o755); err != nil {
					return nil, fmt.Errorf("subPath %s: %w", vm.SubPath, err)
				}
			}
		}
		ms = append(ms, podexec.Mount{Source: src, Target: vm.MountPath, ReadOnly: vm.ReadOnly})
		targets[filepath.Clean(vm.MountPath)] = true
	}
	for _, f := range []string{"resolv.conf", "hosts", "hostname"} {
		if !targets["/etc/"+f] {
			ms = append(ms, podexec.Mount{Source: filepath.Join(sb.dir, f), Target: "/etc/" + f})
		}
	}
	if !targets["/tmp"] {
		ms = append(ms, podexec.Mount{Source: filepath.Join(sb.dir, "tmp"), Target: "/tmp"})
	}
	for _, d := range img.PrivateDirs {
		if targets[filepath.Clean(d)] {
			continue
		}
		src := filepath.Join(sb.dir, "private", c.spec.Name, sanitize(d))
		if err := os.MkdirAll(src, 0o755); err != nil {
			return nil, fmt.Errorf("private folder %s: %w", d, err)
		}
		ms = append(ms, podexec.Mount{Source: src, Target: d})
	}
	return ms, nil
}

// statusFieldRefs maps env names to the status field they reference in the
// Pod's original spec; virtual-kubelet resolves them before the Pod has an IP.
func (pr *Provider) statusFieldRefs(pod *corev1.Pod, container string) map[string]string {
	out := map[string]string{}
	orig, err := pr.pods.Pods(pod.Namespace).Get(pod.Name)
	if err != nil {
		return out
	}
	for _, list := range [][]corev1.Container{orig.Spec.InitContainers, orig.Spec.Containers} {
		for _, ct := range list {
			if ct.Name != container {
				continue
			}
			for _, e := range ct.Env {
				if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.HasPrefix(e.ValueFrom.FieldRef.FieldPath, "status.") {
					out[e.Name] = e.ValueFrom.FieldRef.FieldPath
				}
			}
		}
	}
	return out
}
