package kubelet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Like the real kubelet, this one keeps a running Pod's ConfigMap, Secret,
// downward API and projected volumes up to date: every Config.VolumeRefresh
// it reads their sources again and rewrites the files whose content changed,
// each by renaming a complete new file into place, so that a reader sees the
// old file or the new one and never a part. emptyDir, hostPath and claims are
// never touched. A source that cannot be read (deleted, say) leaves the files
// as they are; the error is logged once and the read retried every period.

// tokens keeps the service-account tokens of a Pod's projected volumes, so
// that a refresh asks the API server for a new one only when it is due.
type tokens struct {
	mu sync.Mutex
	m  map[string]heldToken // by volume name and path
}

type heldToken struct {
	data    []byte
	renewAt time.Time
}

// get returns the token held under key, or a new one from fetch when there
// is none or it has lived 80 % of its life (the real kubelet's rule).
func (tc *tokens) get(key string, fetch func() ([]byte, time.Time, error)) ([]byte, error) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	now := time.Now()
	if t, ok := tc.m[key]; ok && now.Before(t.renewAt) {
		return t.data, nil
	}
	data, expires, err := fetch()
	if err != nil {
		return nil, err
	}
	if tc.m == nil {
		tc.m = map[string]heldToken{}
	}
	tc.m[key] = heldToken{data: data, renewAt: now.Add(expires.Sub(now) * 4 / 5)}
	return data, nil
}

// refreshed reports whether the kubelet rewrites a volume of this kind.
func refreshed(v corev1.Volume) bool {
	return v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil
}

// refreshVolumes rewrites the Pod's refreshed volumes every period until ctx
// ends. A negative period turns it off.
func (r *podRun) refreshVolumes(ctx context.Context) {
	period := r.pr.cfg.VolumeRefresh
	if period < 0 {
		return
	}
	t := time.NewTicker(period)
	defer t.Stop()
	failing := map[string]string{} // volume name: the error last logged
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.refreshOnce(ctx, failing)
	}
}

// refreshOnce reads every refreshed volume's sources once and rewrites what
// changed. failing remembers each volume's last logged error, so that a
// lasting one is logged once and its end once.
func (r *podRun) refreshOnce(ctx context.Context, failing map[string]string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r.mu.Lock()
	pod := r.pod.DeepCopy()
	dirs := r.volumes
	r.mu.Unlock()
	for _, v := range pod.Spec.Volumes {
		dir, ok := dirs[v.Name]
		if !ok || !refreshed(v) {
			continue
		}
		changed, err := r.refreshVolume(ctx, pod, v, dir)
		if ctx.Err() != nil {
			return // the Pod is going away, or the API server is slow: next time
		}
		switch prev, had := failing[v.Name]; {
		case err != nil && (!had || prev != err.Error()):
			failing[v.Name] = err.Error()
			r.pr.cfg.Logf("pod %s/%s: refresh volume %q (kept as it was, retrying): %v", pod.Namespace, pod.Name, v.Name, err)
		case err == nil && had:
			delete(failing, v.Name)
			r.pr.cfg.Logf("pod %s/%s: refresh volume %q works again", pod.Namespace, pod.Name, v.Name)
		}
		if len(changed) > 0 {
			r.pr.cfg.Logf("pod %s/%s: volume %q updated: %s", pod.Namespace, pod.Name, v.Name, strings.Join(changed, ", "))
		}
	}
}

func (r *podRun) refreshVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume, dir string) ([]string, error) {
	files, mode, err := r.pr.volumeFiles(ctx, pod, v, &r.tokens)
	if err != nil {
		return nil, err
	}
	return syncFiles(dir, files, mode)
}

// syncFiles makes dir hold exactly files (names relative to dir): a file
// whose content differs is replaced by renaming a new one over it, and a
// file that is no longer wanted is removed, with the folders it leaves
// empty. It returns the names it wrote or removed, sorted.
func syncFiles(dir string, files map[string][]byte, mode int32) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("volume folder: %w", err)
	}
	var changed []string
	want := map[string]bool{}
	for name, data := range files {
		rel := strings.TrimPrefix(filepath.Clean("/"+name), "/")
		if rel == "" {
			return changed, fmt.Errorf("volume file %q: empty path", name)
		}
		want[rel] = true
		p := filepath.Join(dir, rel)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := replaceFile(p, data, os.FileMode(mode)&0o777); err != nil {
			return changed, fmt.Errorf("volume file %s: %w", name, err)
		}
		changed = append(changed, rel)
	}
	removed, err := removeUnwanted(dir, want)
	changed = append(changed, removed...)
	sort.Strings(changed)
	return changed, err
}

// replaceFile writes data to a temporary file next to p and renames it over p.
func replaceFile(p string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-"+filepath.Base(p)+"-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// removeUnwanted removes every file under dir that want does not name, and
// then every folder left empty (dir itself stays).
func removeUnwanted(dir string, want map[string]bool) ([]string, error) {
	var removed, folders []string
	var errs []error
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case rel == ".":
		case d.IsDir():
			folders = append(folders, p)
		case !want[rel]:
			if err := os.Remove(p); err != nil {
				errs = append(errs, err)
			} else if !strings.HasPrefix(d.Name(), ".tmp-") {
				removed = append(removed, rel)
			}
		}
		return nil
	})
	errs = append(errs, err)
	slices.Reverse(folders) // deepest first
	for _, f := range folders {
		if entries, err := os.ReadDir(f); err == nil && len(entries) == 0 {
			_ = os.Remove(f)
		}
	}
	return removed, errors.Join(errs...)
}
