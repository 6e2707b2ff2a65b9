package objstore

import (
	"errors"
	"testing"
)

func TestNewChecksConfig(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		wantErr bool
		host    string
		secure  bool
	}{
		{name: "https by default", cfg: Config{Endpoint: "s3.example.com", Bucket: "b"}, host: "s3.example.com", secure: true},
		{name: "plain http with a port", cfg: Config{Endpoint: "http://127.0.0.1:7070", Bucket: "b"}, host: "127.0.0.1:7070"},
		{name: "https URL", cfg: Config{Endpoint: "https://minio.local:9000/", Bucket: "b"}, host: "minio.local:9000", secure: true},
		{name: "no bucket", cfg: Config{Endpoint: "s3.example.com"}, wantErr: true},
		{name: "no endpoint", cfg: Config{Bucket: "b"}, wantErr: true},
		{name: "other scheme", cfg: Config{Endpoint: "ftp://h", Bucket: "b"}, wantErr: true},
		{name: "a path in the endpoint", cfg: Config{Endpoint: "http://h/bucket", Bucket: "b"}, wantErr: true},
		{name: "a CA that is no PEM", cfg: Config{Endpoint: "h", Bucket: "b", CA: []byte("nope")}, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.cfg)
			if c.wantErr {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("want ErrInvalidConfig, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.c.EndpointURL(); got.Host != c.host || (got.Scheme == "https") != c.secure {
				t.Fatalf("endpoint %v, want host %s secure %v", got, c.host, c.secure)
			}
		})
	}
}

func TestKeysUnderThePrefix(t *testing.T) {
	s, err := New(Config{Endpoint: "h", Bucket: "b", Prefix: "/backups/shop/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.key(Join("orders", "base", "manifest.json")); got != "backups/shop/orders/base/manifest.json" {
		t.Fatalf("key %q", got)
	}
}
