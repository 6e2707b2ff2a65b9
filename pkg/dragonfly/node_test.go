package dragonfly

import (
	"errors"
	"testing"
)

func TestDetectFlavor(t *testing.T) {
	cases := []struct {
		name string
		info string
		want Flavor
		err  error
	}{
		{"redis", "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n", FlavorRedis, nil},
		{"dragonfly also reports a redis_version", "# Server\r\nredis_version:7.2.0\r\ndragonfly_version:df-v1.25.0\r\n", FlavorDragonfly, nil},
		{"dragonfly alone", "dragonfly_version:df-v1.25.0\n", FlavorDragonfly, nil},
		{"neither", "# Server\r\nvalkey_mode:x\r\n", "", ErrUnknownFlavor},
		{"empty", "", "", ErrUnknownFlavor},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DetectFlavor(c.info)
			if !errors.Is(err, c.err) || got != c.want {
				t.Fatalf("DetectFlavor = %q, %v; want %q, %v", got, err, c.want, c.err)
			}
		})
	}
}

func TestParseReplication(t *testing.T) {
	cases := []struct {
		name string
		info string
		want Replication
		err  error
	}{
		{"redis master", "# Replication\r\nrole:master\r\nconnected_slaves:1\r\nslave0:ip=127.0.0.1,port=6380,state=online,offset=812,lag=0\r\nmaster_repl_offset:812\r\n",
			Replication{Role: RoleMaster, MasterOffset: 812}, nil},
		{"redis replica in sync", "role:slave\r\nmaster_host:127.0.0.1\r\nmaster_port:6379\r\nmaster_link_status:up\r\nmaster_sync_in_progress:0\r\nslave_repl_offset:800\r\nmaster_repl_offset:800\r\n",
			Replication{Role: RoleReplica, MasterOffset: 800, ReplicaOffset: 800, LinkUp: true, StableSync: true,
				Master: Endpoint{"127.0.0.1", 6379}}, nil},
		{"replica in full sync", "role:replica\r\nmaster_host:h\r\nmaster_port:1\r\nmaster_link_status:up\r\nmaster_sync_in_progress:1\r\nslave_repl_offset:0\r\n",
			Replication{Role: RoleReplica, LinkUp: true, Master: Endpoint{"h", 1}}, nil},
		{"replica link down", "role:replica\r\nmaster_host:h\r\nmaster_port:1\r\nmaster_link_status:down\r\nslave_repl_offset:5\r\n",
			Replication{Role: RoleReplica, ReplicaOffset: 5, Master: Endpoint{"h", 1}}, nil},
		{"dragonfly master without offsets", "role:master\r\nconnected_slaves:0\r\n", Replication{Role: RoleMaster}, nil},
		{"no role", "master_repl_offset:1\r\n", Replication{}, ErrBadInfo},
		{"negative offset", "role:master\r\nmaster_repl_offset:-3\r\n", Replication{Role: RoleMaster}, ErrBadInfo},
		{"garbage offset", "role:slave\r\nslave_repl_offset:x\r\n", Replication{Role: RoleReplica}, ErrBadInfo},
		{"bad port", "role:slave\r\nmaster_port:p\r\nslave_repl_offset:1\r\n", Replication{Role: RoleReplica, ReplicaOffset: 1}, ErrBadInfo},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseReplication(c.info)
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if err == nil && got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
