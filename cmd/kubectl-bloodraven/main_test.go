package main

import (
	"errors"
	"io"
	"slices"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	cmd, err := parse([]string{"switchover", "-n", "shop", "orders", "pdx", "--max-lag-wait", "30s", "--wait",
		"--context=prod", "--kubeconfig", "/k"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.name != "switchover" || !slices.Equal(cmd.args, []string{"orders", "pdx"}) || cmd.cfg.Namespace != "shop" ||
		cmd.cfg.Context != "prod" || cmd.cfg.Kubeconfig != "/k" || cmd.maxLagWait != 30*time.Second || !cmd.wait {
		t.Fatalf("parsed %+v", cmd)
	}
	if cmd, err := parse([]string{"status", "orders", "--namespace", "shop"}, io.Discard); err != nil || cmd.cfg.Namespace != "shop" {
		t.Fatalf("status: %+v %v", cmd, err)
	}
	for _, bad := range [][]string{nil, {"nope"}, {"status"}, {"fence", "orders"}, {"status", "a", "b"},
		{"fence", "orders", "pdx", "--wait"}, {"switchover", "orders", "pdx", "--max-lag-wait", "-1s"}} {
		if _, err := parse(bad, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("parse(%q) = %v, want a usage error", bad, err)
		}
	}
}
