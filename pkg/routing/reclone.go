package routing

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// RecloneOptions lay a site's Pod out so that its sidecar can carry out a
// reclone (docs/recovery.md, "A site's Pod"): the data volume holds the
// datadir in a folder of its own, next to the preservation root and the
// reclone's state, all on one file system; the sidecar mounts it too, is
// a clone donor, and stops and starts mysqld through a hold file that the
// mysqld container's entrypoint honours.
type RecloneOptions struct {
	// Entrypoint is the mysqld image's own entrypoint, which a shell
	// wrapper runs once the hold file allows (default docker-entrypoint.sh,
	// the official images'). Empty list: the image honours
	// $BLOODRAVEN_MYSQLD_HOLD_FILE itself (the playground's does).
	Entrypoint []string
}

// Paths of the reclone layout, on the data volume (mounted at DataDir).
const (
	RecloneDataDir = DataDir + "/data"
	RecloneDir     = DataDir + "/reclone"
	// RecloneHoldFile is on the data volume, not the Pod's run folder: a
	// Pod replaced mid-clone must not start mysqld on a datadir half moved.
	RecloneHoldFile     = DataDir + "/" + holdName
	ReclonePreserveRoot = DataDir + "/preserved"
	// EnvMysqldHoldFile names the hold file for an entrypoint that honours it.
	EnvMysqldHoldFile = "BLOODRAVEN_MYSQLD_HOLD_FILE"
	// EnvMysqldDataDir names the datadir for the wrapper's move of an
	// older layout (the datadir at the volume's root) into RecloneDataDir.
	EnvMysqldDataDir = "BLOODRAVEN_MYSQLD_DATADIR"
)

// holdName is the hold file's name at the volume's root.
const holdName = "bloodraven-mysqld.hold"

// recloneOn says whether Pods get the reclone layout: asked for, and with
// the authenticated transport, without which a sidecar refuses it.
func (r *Router) recloneOn() bool { return r.opts.Reclone != nil && r.tlsEnabled() }

// holdScript waits, under a shared lock on the hold file's lock, while the
// hold file exists; moves a datadir still at the volume's root into its
// folder; then runs the image's entrypoint, which inherits the locked
// descriptor 9 (pkg/reclone, HoldFile).
const holdScript = `set -e
hold="$` + EnvMysqldHoldFile + `"; data="$` + EnvMysqldDataDir + `"
exec 9>>"$hold.lock"
flock -s 9
while [ -e "$hold" ]; do flock -u 9; sleep 1; flock -s 9; done
vol="$(dirname "$data")"
if [ -d "$vol/mysql" ] && [ ! -d "$data/mysql" ]; then
  mkdir -p "$data.moving"
  for f in "$vol"/* "$vol"/.[!.]*; do
    case "$(basename "$f")" in "$(basename "$data")"|"$(basename "$data").moving"|lost+found|reclone|preserved|"$(basename "$hold")"|"$(basename "$hold").lock") ;; *) [ -e "$f" ] && mv "$f" "$data.moving/" ;; esac
  done
  if [ -e "$data" ]; then rmdir "$data"; fi
  mv "$data.moving" "$data"
fi
exec "$@"
`

// withReclone adds the reclone layout to a site's Pod spec (after withTLS).
func (r *Router) withReclone(g *v1alpha1.MysqlFailoverGroup, spec corev1.PodSpec) corev1.PodSpec {
	if !r.recloneOn() {
		return spec
	}
	env := []corev1.EnvVar{{Name: EnvMysqldHoldFile, Value: RecloneHoldFile}, {Name: EnvMysqldDataDir, Value: RecloneDataDir}}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		switch c.Name {
		case ContainerMysqld:
			c.Env = append(c.Env, env...)
			c.Args = append(c.Args, "--datadir="+RecloneDataDir)
			if ep := r.opts.Reclone.Entrypoint; len(ep) > 0 && len(c.Command) == 0 {
				c.Command = append([]string{"/bin/sh", "-c", holdScript, "bloodraven-hold"}, ep...)
			}
		case ContainerSidecar:
			c.Args = append(c.Args, "--clone-donor=true", "--clone-defaults-file="+ConfigFile,
				"--reclone-data-dir="+RecloneDataDir, "--reclone-preserve-root="+ReclonePreserveRoot,
				"--reclone-dir="+RecloneDir, "--mysqld-hold-file="+RecloneHoldFile)
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volData, MountPath: DataDir},
				corev1.VolumeMount{Name: volConfig, MountPath: ConfigDir, ReadOnly: true})
		}
	}
	return spec
}
