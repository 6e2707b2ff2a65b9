package grouploop

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A Pod gone from the API is not a process gone: a force-deleted Pod, or
// one whose Node object was deleted, may still run its mysqld and its
// sidecar. A Pod counts as gone, for the site's own fence and as a peer
// that can no longer serve views (its sidecar's lease renewals), only
// once the kubelet of the node it ran on (its spec.nodeName in the last
// listing that showed it) has had time to stop its containers: the node
// exists, is Ready, and its heartbeat advanced, since the read taken when
// this operator first saw the Pod gone, by at least the Pod's termination
// grace period (as that listing showed it; 30 s when unset) plus one
// heartbeat interval. The kubelet stops containers within the grace period
// of noticing the deletion, and a beat one interval later shows it alive
// after that. Only the node's own values are compared with each other (its
// Lease renewTime and its Ready condition's lastHeartbeatTime, both written
// by the kubelet), never the API server's times with this operator's clock.

// nodeLeaseNamespace holds each node's kubelet heartbeat Lease.
const nodeLeaseNamespace = "kube-node-lease"

const (
	// defaultGrace is Kubernetes' terminationGracePeriodSeconds when unset.
	defaultGrace = 30 * time.Second
	// heartbeatMargin is one kubelet heartbeat interval (its Lease renewal
	// period): how much beyond the grace period the node must have beaten.
	heartbeatMargin = 10 * time.Second
	// maxGraceSeconds bounds a listed grace period, so that no value
	// overflows a Duration (the wait is then simply very long).
	maxGraceSeconds = 1 << 31
)

// nodeBeat is one read of a node's kubelet: found says the Node exists.
type nodeBeat struct {
	found bool
	ready bool
	beat  time.Time // the latest of its Lease's renewTime and Ready's lastHeartbeatTime
}

// podNode is a Pod of a site as the last listing showed it: its node and
// the grace periods its containers are stopped with.
type podNode struct {
	node string
	// grace is spec.terminationGracePeriodSeconds, deletionGrace
	// metadata.deletionGracePeriodSeconds; nil when unset.
	grace, deletionGrace *int64
}

// stopWait is how far p's node's heartbeat must advance after p was seen
// gone before its containers count as stopped: the longer of its grace
// periods (30 s when neither is set) plus one heartbeat interval.
func (p podNode) stopWait() time.Duration {
	secs := int64(-1)
	for _, g := range []*int64{p.grace, p.deletionGrace} {
		if g != nil {
			secs = max(secs, min(max(*g, 0), maxGraceSeconds))
		}
	}
	wait := defaultGrace
	if secs >= 0 {
		wait = time.Duration(secs) * time.Second
	}
	return wait + heartbeatMargin
}

// goneWatch is a Pod seen gone: its node, that node's heartbeat read when
// the Pod was first seen gone, and how far it must advance (stopWait).
type goneWatch struct {
	node string
	then nodeBeat
	wait time.Duration
}

// readBeat reads node's heartbeat straight from the API server.
func (l *Loop) readBeat(ctx context.Context, node string) nodeBeat {
	var n corev1.Node
	if err := l.env.Reader.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
		return nodeBeat{}
	}
	b := nodeBeat{found: true}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			b.ready = c.Status == corev1.ConditionTrue
			b.beat = c.LastHeartbeatTime.Time
		}
	}
	var lease coordinationv1.Lease
	if err := l.env.Reader.Get(ctx, client.ObjectKey{Namespace: nodeLeaseNamespace, Name: node}, &lease); err == nil &&
		lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(b.beat) {
		b.beat = lease.Spec.RenewTime.Time
	}
	return b
}

// trackGonePods compares a site's Pods with the last listing: for each Pod
// that went away it keeps its node's heartbeat as read now, and it then
// records whether every such Pod's kubelet has stopped its containers
// (kubeletStopped: since when, on this operator's clock; absent while
// not). A site that answers again with a Pod listed starts afresh.
func (l *Loop) trackGonePods(ctx context.Context, site string, now map[types.UID]podNode) {
	watch := l.goneNodes[site]
	for uid, p := range l.podNodes[site] {
		if _, still := now[uid]; still {
			continue
		}
		if _, ok := watch[uid]; ok {
			continue
		}
		if watch == nil {
			watch = map[types.UID]goneWatch{}
			l.goneNodes[site] = watch
		}
		w := goneWatch{node: p.node, wait: p.stopWait()} // no node: never confirmed by a kubelet
		if p.node != "" {
			w.then = l.readBeat(ctx, p.node)
		}
		watch[uid] = w
	}
	l.podNodes[site] = now
	stopped := len(watch) > 0 && l.kubeletsStopped(ctx, watch)
	switch {
	case !stopped:
		delete(l.kubeletStopped, site)
	case l.kubeletStopped[site].IsZero():
		l.kubeletStopped[site] = l.env.Clock.Now()
		if l.provenAt == nil {
			l.provenAt = map[string]time.Time{}
		}
		l.provenAt[site] = l.kubeletStopped[site]
	}
	// A site that answers again with a Pod listed starts afresh, but only
	// once its gone Pods are proven stopped: until then one of them may
	// still run a sidecar that serves old views (gonePending).
	if len(now) > 0 && l.failingSince(site).IsZero() && (len(watch) == 0 || stopped) {
		delete(l.goneNodes, site)
	}
}

// gonePending reports whether a Pod of site went away and its kubelet is
// not yet known to have stopped it, or whether this pass could not list
// the Pods: its sidecar may still serve views, whatever a replacement Pod's
// sidecar reports.
func (l *Loop) gonePending(site string) bool { return l.podsNow == nil || l.goneUnproven(site) }

// goneUnproven reports whether a Pod of site went away and its kubelet is
// not yet known to have stopped it.
func (l *Loop) goneUnproven(site string) bool {
	return len(l.goneNodes[site]) > 0 && l.kubeletStopped[site].IsZero()
}

// kubeletsStopped reports whether, for every watched Pod, its node exists,
// is Ready and heartbeated at least the Pod's wait after the read taken
// when the Pod was first seen gone (which must have shown a heartbeat).
func (l *Loop) kubeletsStopped(ctx context.Context, watch map[types.UID]goneWatch) bool {
	cur := map[string]nodeBeat{}
	stopped := true
	for uid, w := range watch {
		if w.node == "" {
			// No node when last listed: it may have been bound and started
			// since, and no kubelet can vouch that it stopped.
			return false
		}
		if !w.then.found || w.then.beat.IsZero() {
			// The first read failed: take the first good one as the
			// baseline (later, so more conservative) and wait from there.
			if b := l.readBeat(ctx, w.node); b.found && !b.beat.IsZero() {
				w.then = b
				watch[uid] = w
			}
			stopped = false
			continue
		}
		b, ok := cur[w.node]
		if !ok {
			b = l.readBeat(ctx, w.node)
			cur[w.node] = b
		}
		if !b.found || !b.ready || b.beat.Sub(w.then.beat) < w.wait {
			stopped = false
		}
	}
	return stopped
}

// stoppedAt is since when (this operator's clock) the kubelets of site's
// gone Pods have stopped them, per this pass's listing; zero when not, or
// when this pass could not list the Pods.
func (l *Loop) stoppedAt(site string) time.Time {
	if l.podsNow == nil {
		return time.Time{}
	}
	return l.kubeletStopped[site]
}
