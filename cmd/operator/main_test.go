package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "db-system")
	cases := []struct {
		name    string
		args    []string
		check   func(f flags) bool
		wantErr bool
	}{
		{"defaults", nil, func(f flags) bool {
			return f.leaderElect && f.apiAddr == ":8090" && f.probeAddr == ":8081" && f.metricsAddr == ":8443" &&
				f.apiTLSAddr == ":8091" && f.networkPolicy && f.caSecret == "bloodraven-ca" &&
				f.operatorURL == "https://bloodraven.db-system.svc:8091" && f.drainTimeout == 30*time.Second
		}, false},
		{"chart arguments", []string{"--leader-elect=false", "--namespaces=a,b", "--api-bind-address=:9000",
			"--api-tls-bind-address=:9001", "--metrics-bind-address=0", "--log-level=debug", "--network-policy=false"}, func(f flags) bool {
			return !f.leaderElect && f.namespaces == "a,b" && f.operatorURL == "https://bloodraven.db-system.svc:9001" &&
				f.metricsAddr == "0" && f.apiAddr == ":9000" && !f.networkPolicy
		}, false},
		{"explicit operator URL wins", []string{"--operator-url=http://op:1"}, func(f flags) bool {
			return f.operatorURL == "http://op:1"
		}, false},
		{"loop stall timeout", []string{"--loop-stall-timeout=45s"}, func(f flags) bool {
			return f.stallTimeout == 45*time.Second
		}, false},
		{"unknown flag", []string{"--nope"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := parseFlags(c.args)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if c.check != nil && !c.check(f) {
				t.Fatalf("flags %+v", f)
			}
		})
	}
}

func TestLogLevel(t *testing.T) {
	for _, s := range []string{"debug", "info", "error"} {
		if _, err := logLevel(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := logLevel("loud"); err == nil {
		t.Error("loud accepted")
	}
}

func TestAPIDNSNames(t *testing.T) {
	got := apiDNSNames("https://bloodraven.db-system.svc:8091", "op.example.com, ")
	want := []string{"bloodraven.db-system.svc", "bloodraven.db-system.svc.cluster.local", "bloodraven.db-system",
		"bloodraven", "op.example.com"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("names %v, want %v", got, want)
	}
}

func TestParseLabels(t *testing.T) {
	if m, err := parseLabels("a=b, c=d"); err != nil || m["a"] != "b" || m["c"] != "d" {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{"", "novalue", "=x"} {
		if _, err := parseLabels(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
