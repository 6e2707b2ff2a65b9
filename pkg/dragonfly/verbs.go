package dragonfly

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ReplicaOf makes the node replicate from master.
func (n *Node) ReplicaOf(ctx context.Context, master Endpoint) error {
	if err := n.client.Do(ctx, "REPLICAOF", master.Host, strconv.Itoa(master.Port)).Err(); err != nil {
		return fmt.Errorf("dragonfly: REPLICAOF %s on %s: %w", master, n.at, err)
	}
	return nil
}

// ReplicaOfNoOne makes the node a master at once, with whatever it holds:
// what its old master had not sent is lost.
func (n *Node) ReplicaOfNoOne(ctx context.Context) error {
	if err := n.client.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("dragonfly: REPLICAOF NO ONE on %s: %w", n.at, err)
	}
	return nil
}

// KillNormalClients disconnects the node's application clients (not its
// replicas), so that they reconnect through the Service to the new master.
// It is best effort: the count is what the server reports.
func (n *Node) KillNormalClients(ctx context.Context) (int64, error) {
	k, err := n.client.ClientKillByFilter(ctx, "TYPE", "normal").Result()
	if err != nil {
		return 0, fmt.Errorf("dragonfly: CLIENT KILL TYPE normal on %s: %w", n.at, err)
	}
	return k, nil
}

// Method names how a node became master, as status records it.
type Method string

// Methods.
const (
	MethodReplTakeover Method = "REPLTAKEOVER"
	MethodFailover     Method = "FAILOVER"
	MethodReplicaOfNo  Method = "REPLICAOF NO ONE"
)

// Takeover makes target, a replica of source, the master without losing
// what source acknowledged: the master stops taking writes until target
// has all of it. Dragonfly runs REPLTAKEOVER on target; Redis runs FAILOVER
// on source and polls target until it is master. source may be nil for
// Dragonfly (the replica talks to its master itself); Redis needs it, so a
// source that is down cannot hand over and the caller falls back to
// ReplicaOfNoOne. An error wrapping ErrTakeoverTimeout leaves the outcome
// unknown: read target's role before acting on it.
func Takeover(ctx context.Context, source, target *Node, timeout time.Duration) (Method, error) {
	if timeout <= 0 {
		return "", ErrBadTimeout
	}
	if target.flavor == FlavorDragonfly {
		return MethodReplTakeover, target.replTakeover(ctx, timeout)
	}
	if source == nil {
		return MethodFailover, fmt.Errorf("%w: Redis FAILOVER needs the source", ErrTakeoverFailed)
	}
	return MethodFailover, source.failoverTo(ctx, target, timeout)
}

// replTakeover sends REPLTAKEOVER with the timeout in whole seconds (at
// least one) and maps Dragonfly's documented answers to sentinels.
func (n *Node) replTakeover(ctx context.Context, timeout time.Duration) error {
	secs := int64((timeout + time.Second - 1) / time.Second)
	cctx, cancel := context.WithTimeout(ctx, timeout+2*time.Second)
	defer cancel()
	err := n.client.Do(cctx, "REPLTAKEOVER", strconv.FormatInt(secs, 10)).Err()
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "Full sync not done"):
		return fmt.Errorf("%w: REPLTAKEOVER on %s: %w", ErrNotStableSync, n.at, err)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Errorf("%w: REPLTAKEOVER on %s: %w", ErrTakeoverTimeout, n.at, err)
	}
	return fmt.Errorf("%w: REPLTAKEOVER on %s: %w", ErrTakeoverFailed, n.at, err)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// failoverTo sends FAILOVER TO target TIMEOUT on the master n, then polls
// until target reports itself master (success), n reports no failover in
// progress while still master (aborted), or the timeout plus a margin runs
// out (unknown).
func (n *Node) failoverTo(ctx context.Context, target *Node, timeout time.Duration) error {
	ms := strconv.FormatInt(timeout.Milliseconds(), 10)
	err := n.client.Do(ctx, "FAILOVER", "TO", target.at.Host, strconv.Itoa(target.at.Port), "TIMEOUT", ms).Err()
	if err != nil {
		return fmt.Errorf("%w: FAILOVER TO %s on %s: %w", ErrTakeoverFailed, target.at, n.at, err)
	}
	deadline := time.Now().Add(timeout + 2*time.Second)
	for {
		tr, terr := bounded(ctx, target.Replication)
		state, serr := bounded(ctx, n.failoverState)
		sr, rerr := bounded(ctx, n.Replication)
		if terr == nil && tr.Role == RoleMaster {
			return nil
		}
		if serr == nil && state == "no-failover" {
			if rerr == nil && sr.Role == RoleMaster {
				return fmt.Errorf("%w: FAILOVER TO %s on %s was aborted", ErrTakeoverFailed, target.at, n.at)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: FAILOVER TO %s on %s", ErrTakeoverTimeout, target.at, n.at)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: FAILOVER TO %s on %s: %w", ErrTakeoverTimeout, target.at, n.at, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pollCall bounds one read while a FAILOVER is polled, so that a paused
// server cannot hold the poll past its deadline.
const pollCall = 500 * time.Millisecond

// bounded runs one read within pollCall.
func bounded[T any](ctx context.Context, read func(context.Context) (T, error)) (T, error) {
	cctx, cancel := context.WithTimeout(ctx, pollCall)
	defer cancel()
	return read(cctx)
}

// failoverState is Redis's master_failover_state.
func (n *Node) failoverState(ctx context.Context) (string, error) {
	info, err := n.client.Info(ctx, "replication").Result()
	if err != nil {
		return "", err
	}
	return parseInfo(info)["master_failover_state"], nil
}
