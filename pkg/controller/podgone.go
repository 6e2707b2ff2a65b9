package controller

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A Pod gone from the API is not a process gone: a force-deleted Pod, or
// one whose Node object was deleted, may still run its mysqld. "Pod gone"
// confirms a fence only once the kubelet of every node such a Pod ran on
// (its spec.nodeName in the last listing that showed it) is Ready and has
// heartbeated since this operator first saw the Pod gone: that kubelet has
// then seen the deletion and stops the containers. Only the node's own
// values are compared with each other (its Lease renewTime and its Ready
// condition's lastHeartbeatTime, both written by the kubelet), never the
// API server's times with this operator's clock.

// nodeLeaseNamespace holds each node's kubelet heartbeat Lease.
const nodeLeaseNamespace = "kube-node-lease"

// nodeBeat is one read of a node's kubelet: found says the Node exists.
type nodeBeat struct {
	found bool
	ready bool
	beat  time.Time // the latest of its Lease's renewTime and Ready's lastHeartbeatTime
}

// podNode is a Pod of a site as the last listing showed it.
type podNode struct {
	node string
}

// readBeat reads node's heartbeat straight from the API server.
func (l *groupLoop) readBeat(ctx context.Context, node string) nodeBeat {
	var n corev1.Node
	if err := l.op.reader.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
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
	if err := l.op.reader.Get(ctx, client.ObjectKey{Namespace: nodeLeaseNamespace, Name: node}, &lease); err == nil &&
		lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(b.beat) {
		b.beat = lease.Spec.RenewTime.Time
	}
	return b
}

// trackGonePods compares a site's Pods with the last listing: for the node
// of each Pod that went away it keeps the node's heartbeat as read now, and
// it then says whether every such node's kubelet is Ready and heartbeated
// since (kubeletStopped). A site that answers again with a Pod listed
// starts afresh.
func (l *groupLoop) trackGonePods(ctx context.Context, site string, now map[types.UID]podNode) {
	watch := l.goneNodes[site]
	for uid, p := range l.podNodes[site] {
		if _, still := now[uid]; still {
			continue
		}
		if watch == nil {
			watch = map[string]nodeBeat{}
			l.goneNodes[site] = watch
		}
		if _, ok := watch[p.node]; !ok {
			watch[p.node] = nodeBeat{} // no node: never confirmed by a kubelet
			if p.node != "" {
				watch[p.node] = l.readBeat(ctx, p.node)
			}
		}
	}
	l.podNodes[site] = now
	if len(now) > 0 && l.failingSince(site).IsZero() {
		delete(l.goneNodes, site)
	}
	l.kubeletStopped[site] = len(watch) > 0 && l.nodesBeatSince(ctx, watch)
}

// nodesBeatSince reports whether every watched node exists, is Ready and
// heartbeated after the read taken when its Pod was first seen gone.
func (l *groupLoop) nodesBeatSince(ctx context.Context, watch map[string]nodeBeat) bool {
	for node, then := range watch {
		if node == "" || !then.found {
			return false
		}
		cur := l.readBeat(ctx, node)
		if !cur.found || !cur.ready || !cur.beat.After(then.beat) {
			return false
		}
	}
	return true
}
