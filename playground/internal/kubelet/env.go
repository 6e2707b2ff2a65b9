package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/shipstream/bloodraven/playground/internal/podexec"
)

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// env is the container's environment: defaults, the service variables for
// the API server, the Pod's identity, then the container's own envFrom and
// env (resolved here, with the Pod's IP known), which win. A literal env
// value expands $(VAR) references to the variables defined before it.
func (c *container) env(pod *corev1.Pod, sb *sandbox) ([]string, error) {
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
	ctx, cancel := context.WithTimeout(c.r.ctx, 10*time.Second)
	defer cancel()
	for _, ef := range c.spec.EnvFrom {
		data, err := c.r.pr.envSource(ctx, pod.Namespace, ef)
		if err != nil {
			return nil, err
		}
		for _, k := range sortedKeys(data) {
			vars = append(vars, [2]string{ef.Prefix + k, data[k]})
		}
	}
	for _, e := range c.spec.Env {
		v, err := c.r.pr.envValue(ctx, pod, sb, e)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if e.ValueFrom == nil { // a value may refer to the variables before it
			v = expand(v, lookupVars(vars))
		}
		vars = append(vars, [2]string{e.Name, v})
	}
	return dedupe(vars), nil
}

// lookupVars finds the last definition of a variable among vars.
func lookupVars(vars [][2]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i := len(vars) - 1; i >= 0; i-- {
			if vars[i][0] == name {
				return vars[i][1], true
			}
		}
		return "", false
	}
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

func (pr *Provider) envValue(ctx context.Context, pod *corev1.Pod, sb *sandbox, e corev1.EnvVar) (string, error) {
	vf := e.ValueFrom
	switch {
	case vf == nil:
		return e.Value, nil
	case vf.FieldRef != nil:
		switch vf.FieldRef.FieldPath {
		case "status.podIP", "status.podIPs":
			return sb.ip.String(), nil
		case "status.hostIP", "status.hostIPs":
			return pr.cfg.NodeIP.String(), nil
		}
		return fieldValue(pod, vf.FieldRef.FieldPath)
	case vf.ConfigMapKeyRef != nil:
		r := vf.ConfigMapKeyRef
		files, err := pr.configMapFiles(ctx, pod.Namespace, r.Name, nil, r.Optional)
		return keyOf(files, r.Key, r.Optional, err)
	case vf.SecretKeyRef != nil:
		r := vf.SecretKeyRef
		files, err := pr.secretFiles(ctx, pod.Namespace, r.Name, nil, r.Optional)
		return keyOf(files, r.Key, r.Optional, err)
	}
	return "", nil // resourceFieldRef: no limits are enforced here
}

func keyOf(files map[string][]byte, key string, optional *bool, err error) (string, error) {
	if err != nil {
		return "", err
	}
	v, ok := files[key]
	if !ok && (optional == nil || !*optional) {
		return "", fmt.Errorf("key %q missing", key)
	}
	return string(v), nil
}

func (pr *Provider) envSource(ctx context.Context, ns string, ef corev1.EnvFromSource) (map[string]string, error) {
	var files map[string][]byte
	var err error
	switch {
	case ef.ConfigMapRef != nil:
		files, err = pr.configMapFiles(ctx, ns, ef.ConfigMapRef.Name, nil, ef.ConfigMapRef.Optional)
	case ef.SecretRef != nil:
		files, err = pr.secretFiles(ctx, ns, ef.SecretRef.Name, nil, ef.SecretRef.Optional)
	}
	if err != nil {
		return nil, fmt.Errorf("envFrom: %w", err)
	}
	out := map[string]string{}
	for k, v := range files {
		out[k] = string(v)
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
