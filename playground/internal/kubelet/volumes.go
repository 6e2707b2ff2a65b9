package kubelet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// errNotReady marks a volume that cannot be made yet (an unbound claim, a
// missing ConfigMap); the Pod waits and tries again.
var errNotReady = errors.New("volume not ready")

// prepareVolumes makes every volume of the Pod on the host and returns the
// host path of each by volume name. Service-account tokens are kept in tc.
func (pr *Provider) prepareVolumes(ctx context.Context, pod *corev1.Pod, dir string, tc *tokens) (map[string]string, error) {
	paths := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		p, err := pr.prepareVolume(ctx, pod, v, filepath.Join(dir, "volumes", v.Name), tc)
		if err != nil {
			return nil, fmt.Errorf("volume %q: %w", v.Name, err)
		}
		paths[v.Name] = p
	}
	return paths, nil
}

func (pr *Provider) prepareVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume, dir string, tc *tokens) (string, error) {
	switch {
	case v.EmptyDir != nil:
		return dir, os.MkdirAll(dir, 0o777)
	case v.HostPath != nil:
		return v.HostPath.Path, nil
	case v.PersistentVolumeClaim != nil:
		return pr.claimPath(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
	}
	files, mode, err := pr.volumeFiles(ctx, pod, v, tc)
	if err != nil {
		return "", err
	}
	_, err = syncFiles(dir, files, mode)
	return dir, err
}

// volumeFiles returns the files of a ConfigMap, Secret, downward API or
// projected volume.
func (pr *Provider) volumeFiles(ctx context.Context, pod *corev1.Pod, v corev1.Volume, tc *tokens) (map[string][]byte, int32, error) {
	switch {
	case v.ConfigMap != nil:
		f, err := pr.configMapFiles(ctx, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional)
		return f, modeOr(v.ConfigMap.DefaultMode), err
	case v.Secret != nil:
		f, err := pr.secretFiles(ctx, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional)
		return f, modeOr(v.Secret.DefaultMode), err
	case v.DownwardAPI != nil:
		f, err := downwardFiles(pod, v.DownwardAPI.Items)
		return f, modeOr(v.DownwardAPI.DefaultMode), err
	case v.Projected != nil:
		f, err := pr.projectedFiles(ctx, pod, v.Name, v.Projected.Sources, tc)
		return f, modeOr(v.Projected.DefaultMode), err
	}
	return nil, 0, fmt.Errorf("unsupported volume type (supported: emptyDir, hostPath, persistentVolumeClaim, configMap, secret, downwardAPI, projected)")
}

func modeOr(m *int32) int32 {
	if m == nil {
		return 0o644
	}
	return *m
}

func (pr *Provider) claimPath(ctx context.Context, ns, name string) (string, error) {
	pvc, err := pr.cfg.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("claim %s/%s: %w: %w", ns, name, errNotReady, err)
	}
	if pvc.Spec.VolumeName == "" || pvc.Status.Phase != corev1.ClaimBound {
		return "", fmt.Errorf("claim %s/%s is not bound: %w", ns, name, errNotReady)
	}
	pv, err := pr.cfg.Client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", pvc.Spec.VolumeName, err)
	}
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path, os.MkdirAll(pv.Spec.HostPath.Path, 0o777)
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path, nil
	}
	return "", fmt.Errorf("volume %s is neither hostPath nor local", pv.Name)
}

func (pr *Provider) configMapFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool) (map[string][]byte, error) {
	cm, err := pr.cfg.Client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("configmap %s/%s: %w: %w", ns, name, errNotReady, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return pick(data, items)
}

func (pr *Provider) secretFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool) (map[string][]byte, error) {
	s, err := pr.cfg.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w: %w", ns, name, errNotReady, err)
	}
	data := map[string][]byte{}
	for k, v := range s.Data {
		data[k] = v
	}
	for k, v := range s.StringData {
		data[k] = []byte(v)
	}
	return pick(data, items)
}

func pick(data map[string][]byte, items []corev1.KeyToPath) (map[string][]byte, error) {
	if len(items) == 0 {
		return data, nil
	}
	out := map[string][]byte{}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return nil, fmt.Errorf("key %q missing", it.Key)
		}
		out[it.Path] = v
	}
	return out, nil
}

func downwardFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, it := range items {
		if it.FieldRef == nil {
			continue // resourceFieldRef: no limits are enforced here
		}
		v, err := fieldValue(pod, it.FieldRef.FieldPath)
		if err != nil {
			return nil, err
		}
		out[it.Path] = []byte(v)
	}
	return out, nil
}

func fieldValue(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "metadata.labels":
		return kvLines(pod.Labels), nil
	case "metadata.annotations":
		return kvLines(pod.Annotations), nil
	}
	return "", fmt.Errorf("unsupported downward API field %q", path)
}

// kvLines renders a map one key a line, sorted, so that the same labels
// always make the same file (a refresh rewrites only what changed).
func kvLines(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%q\n", k, m[k])
	}
	return b.String()
}

func (pr *Provider) projectedFiles(ctx context.Context, pod *corev1.Pod, vol string, sources []corev1.VolumeProjection, tc *tokens) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, src := range sources {
		var files map[string][]byte
		var err error
		switch {
		case src.ServiceAccountToken != nil:
			p := src.ServiceAccountToken
			var tok []byte
			tok, err = tc.get(vol+"/"+p.Path, func() ([]byte, time.Time, error) { return pr.token(ctx, pod, p) })
			files = map[string][]byte{p.Path: tok}
		case src.ConfigMap != nil:
			files, err = pr.configMapFiles(ctx, pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional)
		case src.Secret != nil:
			files, err = pr.secretFiles(ctx, pod.Namespace, src.Secret.Name, src.Secret.Items, src.Secret.Optional)
		case src.DownwardAPI != nil:
			files, err = downwardFiles(pod, src.DownwardAPI.Items)
		}
		if err != nil {
			return nil, err
		}
		for k, v := range files {
			out[k] = v
		}
	}
	return out, nil
}

// token asks the API server for a service-account token bound to the Pod,
// and returns it with its expiry.
func (pr *Provider) token(ctx context.Context, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) ([]byte, time.Time, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	exp := int64(24 * time.Hour / time.Second)
	req := &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if p.Audience != "" {
		req.Spec.Audiences = []string{p.Audience}
	}
	tr, err := pr.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("token for %s/%s: %w: %w", pod.Namespace, sa, errNotReady, err)
	}
	expires := tr.Status.ExpirationTimestamp.Time
	if expires.IsZero() {
		expires = time.Now().Add(time.Duration(exp) * time.Second)
	}
	return []byte(tr.Status.Token), expires, nil
}
