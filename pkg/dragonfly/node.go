package dragonfly

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Flavor is the server software behind a Node.
type Flavor string

// Flavors.
const (
	FlavorDragonfly Flavor = "dragonfly"
	FlavorRedis     Flavor = "redis"
)

// Role is a server's replication role.
type Role string

// Roles, as INFO replication spells them (Redis's "slave" reads as replica).
const (
	RoleMaster  Role = "master"
	RoleReplica Role = "replica"
)

// Endpoint is how other servers reach a node: its host and port as a
// replica announces them to its master.
type Endpoint struct {
	Host string
	Port int
}

// String is host:port.
func (e Endpoint) String() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// Node is one cache server of a known flavor.
type Node struct {
	client *redis.Client
	flavor Flavor
	at     Endpoint
}

// Open detects c's flavor with INFO server. at is how other servers reach
// it (the Redis FAILOVER statement names the target by it). The caller
// keeps c and closes it.
func Open(ctx context.Context, c *redis.Client, at Endpoint) (*Node, error) {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return nil, fmt.Errorf("dragonfly: INFO server on %s: %w", at, err)
	}
	f, err := DetectFlavor(info)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	return &Node{client: c, flavor: f, at: at}, nil
}

// DetectFlavor reads the flavor from an INFO server answer: Dragonfly
// reports dragonfly_version (and, for compatibility, a redis_version too),
// so dragonfly_version wins.
func DetectFlavor(info string) (Flavor, error) {
	fields := parseInfo(info)
	if fields["dragonfly_version"] != "" {
		return FlavorDragonfly, nil
	}
	if fields["redis_version"] != "" {
		return FlavorRedis, nil
	}
	return "", ErrUnknownFlavor
}

// Flavor is the node's server software.
func (n *Node) Flavor() Flavor { return n.flavor }

// Endpoint is how other servers reach the node.
func (n *Node) Endpoint() Endpoint { return n.at }

// Replication is what INFO replication says of a node.
type Replication struct {
	Role Role
	// MasterOffset is master_repl_offset: on a master, how far its
	// replication stream has gone.
	MasterOffset int64
	// ReplicaOffset is slave_repl_offset on a replica: how much of its
	// master's stream it has processed. Zero on a master.
	ReplicaOffset int64
	// LinkUp is master_link_status:up on a replica.
	LinkUp bool
	// StableSync is true on a replica whose link is up and whose full sync
	// is over (master_sync_in_progress:0): only such a Dragonfly replica
	// accepts REPLTAKEOVER.
	StableSync bool
	// Master is the replica's master (master_host, master_port).
	Master Endpoint
}

// Replication reads INFO replication.
func (n *Node) Replication(ctx context.Context) (Replication, error) {
	info, err := n.client.Info(ctx, "replication").Result()
	if err != nil {
		return Replication{}, fmt.Errorf("dragonfly: INFO replication on %s: %w", n.at, err)
	}
	r, err := ParseReplication(info)
	if err != nil {
		return Replication{}, fmt.Errorf("%s: %w", n.at, err)
	}
	return r, nil
}

// ParseReplication reads an INFO replication answer of either flavor.
func ParseReplication(info string) (Replication, error) {
	f := parseInfo(info)
	var r Replication
	switch f["role"] {
	case "master":
		r.Role = RoleMaster
	case "slave", "replica":
		r.Role = RoleReplica
	default:
		return r, fmt.Errorf("%w: role %q", ErrBadInfo, f["role"])
	}
	var err error
	if r.MasterOffset, err = offset(f, "master_repl_offset"); err != nil {
		return r, err
	}
	if r.Role == RoleMaster {
		return r, nil
	}
	if r.ReplicaOffset, err = offset(f, "slave_repl_offset"); err != nil {
		return r, err
	}
	r.LinkUp = f["master_link_status"] == "up"
	r.StableSync = r.LinkUp && f["master_sync_in_progress"] != "1"
	r.Master.Host = f["master_host"]
	if p := f["master_port"]; p != "" {
		if r.Master.Port, err = strconv.Atoi(p); err != nil {
			return r, fmt.Errorf("%w: master_port %q", ErrBadInfo, p)
		}
	}
	return r, nil
}

// offset reads an offset field; a missing one is zero (Dragonfly leaves out
// some of Redis's fields).
func offset(f map[string]string, key string) (int64, error) {
	v, ok := f[key]
	if !ok || v == "" {
		return 0, nil
	}
	o, err := strconv.ParseInt(v, 10, 64)
	if err != nil || o < 0 {
		return 0, fmt.Errorf("%w: %s %q", ErrBadInfo, key, v)
	}
	return o, nil
}

// parseInfo splits an INFO answer into its key:value lines.
func parseInfo(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[k] = v
		}
	}
	return out
}
