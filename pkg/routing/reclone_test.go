package routing

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/shipstream/bloodraven/pkg/reclone"
)

func container(spec corev1.PodSpec, name string) corev1.Container {
	for _, c := range spec.Containers {
		if c.Name == name {
			return c
		}
	}
	return corev1.Container{}
}

// TestRecloneLayout: with Reclone and the authenticated transport, the
// sidecar gets the reclone flags, the data volume and my.cnf, mysqld a
// datadir in a folder of the volume and the hold-file wrapper; without
// either, the Pod is as before.
func TestRecloneLayout(t *testing.T) {
	now := time.Now()
	g := tlsGroup()
	for _, tc := range []struct {
		name    string
		reclone *RecloneOptions
		tls     bool
		on      bool
		wrapped bool
	}{
		{"off", nil, true, false, false},
		{"on, wrapped", &RecloneOptions{Entrypoint: []string{"docker-entrypoint.sh"}}, true, true, true},
		{"on, the image honours the hold file", &RecloneOptions{}, true, true, false},
		{"without TLS the sidecar could not serve it", &RecloneOptions{Entrypoint: []string{"docker-entrypoint.sh"}}, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _, _ := tlsRouter(t, &now)
			r.opts.Reclone = tc.reclone
			if !tc.tls {
				r.opts.CA = nil
			}
			spec := r.renderPodSpec(g, g.Spec.Sites[0])
			sc, my := container(spec, ContainerSidecar), container(spec, ContainerMysqld)
			args := strings.Join(sc.Args, " ")
			hasFlags := strings.Contains(args, "--reclone-data-dir="+RecloneDataDir) &&
				strings.Contains(args, "--mysqld-hold-file="+RecloneHoldFile) && strings.Contains(args, "--clone-donor=true")
			mounted := slices.ContainsFunc(sc.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == volData })
			cnf := renderMyCnf(r.flavor(g), "iad", "", g.Spec.MySQL.TLS, r.cnfPaths())
			if hasFlags != tc.on || mounted != tc.on || strings.Contains(cnf, "datadir="+RecloneDataDir+"\n") != tc.on ||
				slices.Contains(my.Args, "--datadir="+RecloneDataDir) != tc.on {
				t.Fatalf("reclone on %v: sidecar flags %v, data mounted %v, args %v\n%s", tc.on, hasFlags, mounted, my.Args, cnf)
			}
			if (len(my.Command) > 0) != tc.wrapped {
				t.Fatalf("mysqld command %q, wrapped %v", my.Command, tc.wrapped)
			}
		})
	}
}

// TestHoldScript runs the wrapper with a real shell: it waits while the
// hold file exists, moves a datadir still at the volume's root into its
// folder, and runs the entrypoint holding the lock HoldFile.Stop waits for.
func TestHoldScript(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Fatalf("flock (util-linux) is needed: %v", err)
	}
	vol := t.TempDir()
	// The hold file sits at the volume's root, as in a Pod, and is not moved.
	data, hold := filepath.Join(vol, "data"), filepath.Join(vol, holdName)
	for _, d := range []string{"mysql", "lost+found"} {
		if err := os.Mkdir(filepath.Join(vol, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"ibdata1", ".hidden"} {
		if err := os.WriteFile(filepath.Join(vol, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(t.TempDir(), "ran")
	cmd := exec.Command("/bin/sh", "-c", holdScript, "bloodraven-hold", "/bin/sh", "-c", `touch "$0"; sleep 2`, ran)
	cmd.Env = append(os.Environ(), EnvMysqldHoldFile+"="+hold, EnvMysqldDataDir+"="+data)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the entrypoint ran while held")
	}
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(ran); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the entrypoint did not run once released")
		}
		time.Sleep(50 * time.Millisecond)
	}
	h := reclone.HoldFile{Path: hold, Poll: 20 * time.Millisecond, Shutdown: func(context.Context) error { return nil }}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := h.Stop(ctx); err == nil {
		t.Fatal("Stop reported mysqld gone while the entrypoint's process runs")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(t.Context()); err != nil {
		t.Fatalf("Stop once it exited: %v", err)
	}
	for _, p := range []string{"data/mysql", "data/ibdata1", "data/.hidden", "lost+found"} {
		if _, err := os.Stat(filepath.Join(vol, p)); err != nil {
			t.Fatalf("after the move: %v", err)
		}
	}
	var names []string
	entries, _ := os.ReadDir(vol)
	for _, en := range entries {
		names = append(names, en.Name())
	}
	if want := []string{holdName, holdName + ".lock", "data", "lost+found"}; !slices.Equal(names, want) {
		t.Fatalf("volume root holds %v, want %v (the last Stop wrote the hold again)", names, want)
	}
}
