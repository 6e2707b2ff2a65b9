//go:build localcluster

package localcluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const refreshPod = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: refresh}
spec:
  replicas: 1
  selector: {matchLabels: {app: refresh}}
  template:
    metadata: {labels: {app: refresh, colour: blue}}
    spec:
      terminationGracePeriodSeconds: 1
      volumes:
      - {name: config, configMap: {name: settings}}
      - {name: secret, secret: {secretName: creds}}
      - name: projected
        projected:
          sources:
          - configMap: {name: settings, items: [{key: mode, path: cm/mode}]}
          - secret: {name: creds, items: [{key: password, path: sec/password}]}
          - downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
      - {name: scratch, emptyDir: {}}
      initContainers:
      - name: init
        image: busybox
        command: [sh, -c, 'echo mine > /scratch/note']
        volumeMounts: [{name: scratch, mountPath: /scratch}]
      containers:
      - name: web
        image: http-echo
        ports: [{name: http, containerPort: 8080}]
        volumeMounts:
        - {name: config, mountPath: /etc/settings, readOnly: true}
        - {name: secret, mountPath: /etc/creds, readOnly: true}
        - {name: projected, mountPath: /etc/all, readOnly: true}
        - {name: scratch, mountPath: /scratch}
`

// TestVolumesRefresh: while a Pod runs, the kubelet brings its ConfigMap,
// Secret and projected volumes up to date with their sources (a changed key
// rewritten, a removed key gone, a changed label in the downward API),
// within a few refresh periods, and leaves the emptyDir alone.
func TestVolumesRefresh(t *testing.T) {
	c := cluster(t)
	ns := namespace(t, c, "volume-refresh")
	apply(t, c, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast, extra: gone-soon}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: first}\n",
		refreshPod)
	pod := readyPod(t, c, ns, "app=refresh", 30*time.Second)
	ctx := context.Background()
	cat := func(path string) (string, error) {
		out, err := c.Kubectl(ctx, "-n", ns, "exec", pod.Name, "-c", "web", "--", "cat", path)
		return string(out), err
	}
	// want maps a path to its content, or with a leading "~" to a part of it.
	expect := func(what string, want map[string]string, gone []string) {
		t.Helper()
		start := time.Now()
		eventually(t, 20*time.Second, what, func() error {
			for path, w := range want {
				got, err := cat(path)
				if sub, ok := strings.CutPrefix(w, "~"); ok && err == nil && strings.Contains(got, sub) {
					continue
				}
				if err != nil || got != w {
					return fmt.Errorf("cat %s = %q, %v; want %q", path, got, err, w)
				}
			}
			for _, path := range gone {
				if got, err := cat(path); err == nil {
					return fmt.Errorf("%s still there (%q)", path, got)
				}
			}
			return nil
		})
		t.Logf("%s after %.1fs", what, time.Since(start).Seconds())
	}
	expect("volumes written at start", map[string]string{
		"/etc/settings/mode": "fast", "/etc/settings/extra": "gone-soon", "/etc/creds/password": "first",
		"/etc/all/cm/mode": "fast", "/etc/all/sec/password": "first", "/scratch/note": "mine\n",
		"/etc/all/labels": "~\ncolour=\"blue\"\n",
	}, nil)

	cms := c.Client.CoreV1().ConfigMaps(ns)
	if _, err := cms.Patch(ctx, "settings", types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/data/mode","value":"slow"},{"op":"remove","path":"/data/extra"}]`),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Secrets(ns).Patch(ctx, "creds", types.MergePatchType,
		[]byte(`{"stringData":{"password":"second"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Pods(ns).Patch(ctx, pod.Name, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"colour":"green"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("ConfigMap, Secret and labels refreshed", map[string]string{
		"/etc/settings/mode": "slow", "/etc/creds/password": "second",
		"/etc/all/cm/mode": "slow", "/etc/all/sec/password": "second", "/scratch/note": "mine\n",
		"/etc/all/labels": "~\ncolour=\"green\"\n",
	}, []string{"/etc/settings/extra"})

	// A deleted source leaves the files as they were; once it is back, they follow it again.
	if err := cms.Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(8 * time.Second) // more than one refresh period
	expect("files kept while the ConfigMap is gone", map[string]string{"/etc/settings/mode": "slow"}, nil)
	apply(t, c, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: back}\n")
	expect("ConfigMap followed again once recreated", map[string]string{"/etc/settings/mode": "back", "/etc/all/cm/mode": "back"}, nil)
	if p, err := c.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("the Pod restarted or is gone: %v", err)
	}
}
