package localcluster

import (
	"fmt"
	"os"

	"github.com/shipstream/bloodraven/playground/internal/images"
	"github.com/shipstream/bloodraven/playground/internal/podexec"
	"github.com/shipstream/bloodraven/playground/internal/proc"
	"github.com/shipstream/bloodraven/playground/internal/supervisor"
)

const roleSupervise = "supervise"

var initCalled bool

// Init must be the first call of main, or of TestMain, in any binary that
// uses Up: when the binary was re-executed as one of the cluster's helpers
// (the supervisor, the container launcher, a built-in image) it runs that
// helper and exits instead of returning.
func Init() {
	initCalled = true
	if len(os.Args) > 2 && os.Args[1] == images.Arg {
		exit(images.Run(os.Args[2], os.Args[3:]))
	}
	switch os.Getenv(proc.RoleEnv) {
	case "":
		return
	case proc.RolePodExec:
		exit(podexec.Main(os.Getenv(proc.SpecEnv)))
	case roleSupervise:
		cfg, err := supervisor.ReadConfig(os.Getenv(proc.SpecEnv))
		_ = os.Unsetenv(proc.RoleEnv) // the control plane inherits this environment
		_ = os.Unsetenv(proc.SpecEnv)
		if err == nil {
			err = supervisor.Run(cfg, os.Stdout)
		}
		exit(err)
	default:
		exit(fmt.Errorf("unknown helper role %q", os.Getenv(proc.RoleEnv)))
	}
}

func exit(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster helper: %v\n", err)
		os.Exit(127)
	}
	os.Exit(0)
}
