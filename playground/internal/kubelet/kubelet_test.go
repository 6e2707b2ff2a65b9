package kubelet

import (
	"net"
	"strings"
	"testing"
)

func TestImagesLookup(t *testing.T) {
	m := Images{"mariadb": {Entrypoint: []string{"m"}}, "ghcr.io/x/op": {Entrypoint: []string{"o"}}, "exact:1": {Entrypoint: []string{"e"}}}
	cases := map[string]string{
		"mariadb": "m", "mariadb:11.4": "m", "docker.io/library/mariadb:11.4": "m", "mariadb@sha256:ab": "m",
		"ghcr.io/x/op:v1": "o", "exact:1": "e", "localhost:5000/mariadb": "m",
	}
	for ref, want := range cases {
		img, ok := m.Lookup(ref)
		if !ok || img.Entrypoint[0] != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", ref, img, ok, want)
		}
	}
	if _, ok := m.Lookup("redis:7"); ok {
		t.Error("redis matched")
	}
}

func TestIPPool(t *testing.T) {
	_, cidr, _ := net.ParseCIDR("10.250.3.0/29") // .2 to .6 usable
	p := newIPPool(cidr)
	seen := map[string]bool{}
	for range 5 {
		ip, err := p.get()
		if err != nil {
			t.Fatal(err)
		}
		if !cidr.Contains(ip) || ip[3] < 2 || ip[3] > 6 || seen[ip.String()] {
			t.Fatalf("bad or repeated IP %s", ip)
		}
		seen[ip.String()] = true
	}
	if _, err := p.get(); err == nil {
		t.Fatal("a full pool handed out an IP")
	}
	p.put(net.ParseIP("10.250.3.4").To4())
	if ip, err := p.get(); err != nil || ip.String() != "10.250.3.4" {
		t.Fatalf("after put: %v, %v", ip, err)
	}
}

func TestTailAndDedupe(t *testing.T) {
	if got := string(tailLines([]byte("a\nb\nc\n"), 2)); got != "b\nc\n" {
		t.Errorf("tail = %q", got)
	}
	got := strings.Join(dedupe([][2]string{{"A", "1"}, {"B", "2"}, {"A", "3"}}), " ")
	if got != "A=3 B=2" {
		t.Errorf("dedupe = %q", got)
	}
}
