package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/shipstream/bloodraven/pkg/authority"
)

// serviceAccountNamespace is where Kubernetes mounts the Pod's namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// newLeaderLock makes the manager's leader-election Lease lock here, rather
// than inside the manager, so that the operator knows its own identity and
// can check, before every step that makes a site writable, that it still
// holds the Lease (authority.LockLeadership).
func newLeaderLock(cfg *rest.Config, f flags) (resourcelock.Interface, error) {
	ns := f.leaderElectionNS
	if ns == "" {
		b, err := os.ReadFile(serviceAccountNamespace)
		if err != nil {
			return nil, fmt.Errorf("leader election namespace: not given and not in a cluster: %w", err)
		}
		ns = strings.TrimSpace(string(b))
	}
	identity, err := leaderIdentity(f)
	if err != nil {
		return nil, err
	}
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cfg.Timeout = 5 * time.Second
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	coord, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, f.leaderElectionID, core, coord,
		resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return nil, fmt.Errorf("leader election lock: %w", err)
	}
	return lock, nil
}

// leaderIdentity is the name the operator holds the Lease under: its Pod's
// name (--leader-election-identity, $POD_NAME in the chart), so that a
// process restarted in the same Pod takes its own Lease back at once
// instead of waiting for it to expire. Two processes of one Pod never run
// together: the kubelet starts a container again only once the last one
// has exited. Another Pod has another name and waits for the Lease as
// before. Outside a Pod (no name given) each process is its own: the host
// name and a random suffix.
func leaderIdentity(f flags) (string, error) {
	if f.leaderIdentity != "" {
		return f.leaderIdentity, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// leadership is the operator's view of its lock; nil when leader election is off.
func leadership(lock resourcelock.Interface) authority.Leadership {
	if lock == nil {
		return nil
	}
	return authority.LockLeadership{Lock: lock, Now: time.Now}
}
