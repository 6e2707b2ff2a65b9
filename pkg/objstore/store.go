package objstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// partSize is the size of one part of a streamed upload: large enough that a
// GiB takes few requests, small enough that a retry resends little.
const partSize = 32 << 20

// Config says where objects live.
type Config struct {
	// Endpoint is the store's address: "https://host[:port]",
	// "http://host:port", or "host[:port]" (HTTPS).
	Endpoint string
	// Region defaults to us-east-1.
	Region string
	Bucket string
	// Prefix is put before every key ("backups/shop" keeps keys under
	// "backups/shop/...").
	Prefix string
	// PathStyle addresses the bucket in the path (gateways, MinIO-likes)
	// rather than as a subdomain.
	PathStyle bool
	AccessKey string
	SecretKey string
	// CA, when set, is the PEM bundle that verifies the endpoint.
	CA []byte
}

// Store is one bucket and prefix of an S3-compatible store.
type Store struct {
	c      *minio.Client
	bucket string
	prefix string
}

// Object is one stored object.
type Object struct {
	Key      string // without the Store's prefix
	Size     int64
	Modified time.Time
}

// New connects nothing yet: it checks cfg and prepares the client.
func New(cfg Config) (*Store, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, fmt.Errorf("%w: endpoint and bucket are required", ErrInvalidConfig)
	}
	host, secure, err := parseEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	opts := &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Secure: secure,
		Region: region, BucketLookup: minio.BucketLookupDNS}
	if cfg.PathStyle {
		opts.BucketLookup = minio.BucketLookupPath
	}
	if len(cfg.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CA) {
			return nil, fmt.Errorf("%w: the CA bundle holds no PEM certificate", ErrInvalidConfig)
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		opts.Transport = tr
	}
	c, err := minio.New(host, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &Store{c: c, bucket: cfg.Bucket, prefix: strings.Trim(cfg.Prefix, "/")}, nil
}

// parseEndpoint splits an endpoint into host[:port] and whether it is HTTPS.
func parseEndpoint(e string) (string, bool, error) {
	if !strings.Contains(e, "://") {
		return strings.TrimSuffix(e, "/"), true, nil
	}
	u, err := url.Parse(e)
	if err != nil {
		return "", false, fmt.Errorf("%w: endpoint %q: %w", ErrInvalidConfig, e, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return "", false, fmt.Errorf("%w: endpoint %q: want http(s)://host[:port]", ErrInvalidConfig, e)
	}
	return u.Host, u.Scheme == "https", nil
}

// key is the full key of name under the prefix.
func (s *Store) key(name string) string {
	if s.prefix == "" {
		return name
	}
	return s.prefix + "/" + name
}

// EnsureBucket creates the bucket when it does not exist.
func (s *Store) EnsureBucket(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("objstore: bucket %s: %w", s.bucket, err)
	}
	if ok {
		return nil
	}
	if err := s.c.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("objstore: create bucket %s: %w", s.bucket, err)
	}
	return nil
}

// Put stores what r yields under name, streamed in parts; it returns the
// bytes stored. An upload that fails leaves no object behind.
func (s *Store) Put(ctx context.Context, name string, r io.Reader, contentType string) (int64, error) {
	info, err := s.c.PutObject(ctx, s.bucket, s.key(name), r, -1,
		minio.PutObjectOptions{PartSize: partSize, ContentType: contentType})
	if err != nil {
		return 0, fmt.Errorf("objstore: put %s: %w", name, err)
	}
	return info.Size, nil
}

// Get opens the object under name; ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	if _, err := s.Stat(ctx, name); err != nil {
		return nil, err
	}
	o, err := s.c.GetObject(ctx, s.bucket, s.key(name), minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("objstore: get %s: %w", name, err)
	}
	return o, nil
}

// Stat describes the object under name; ErrNotFound when there is none.
func (s *Store) Stat(ctx context.Context, name string) (Object, error) {
	info, err := s.c.StatObject(ctx, s.bucket, s.key(name), minio.StatObjectOptions{})
	if err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return Object{}, fmt.Errorf("%w: %s", ErrNotFound, name)
		}
		return Object{}, fmt.Errorf("objstore: stat %s: %w", name, err)
	}
	return Object{Key: name, Size: info.Size, Modified: info.LastModified}, nil
}

// List returns the objects whose names start with prefix, in key order.
func (s *Store) List(ctx context.Context, prefix string) ([]Object, error) {
	full := s.key(prefix)
	var out []Object
	for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: full, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("objstore: list %s: %w", prefix, o.Err)
		}
		name := o.Key
		if s.prefix != "" {
			name = strings.TrimPrefix(name, s.prefix+"/")
		}
		out = append(out, Object{Key: name, Size: o.Size, Modified: o.LastModified})
	}
	return out, nil
}

// Remove deletes the object under name; a missing object is no error.
func (s *Store) Remove(ctx context.Context, name string) error {
	err := s.c.RemoveObject(ctx, s.bucket, s.key(name), minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
		return fmt.Errorf("objstore: remove %s: %w", name, err)
	}
	return nil
}

// Join joins key parts with "/", as object names do.
func Join(parts ...string) string { return path.Join(parts...) }

// IsNotFound tells whether err says the object is missing.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
