package backup

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/objstore"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Entry is one base backup in the store with what it can be restored to.
type Entry struct {
	Manifest Manifest
	// Window is the span a point-in-time restore from it can reach with
	// the archive as it is; empty (To before From) when nothing archived
	// carries it on.
	Window topology.PITRWindow
	// WindowErr says why no window could be judged (an archive record
	// refused, an ambiguous archive).
	WindowErr error
}

// Catalog lists the group's base backups, oldest first, each with its
// restore window. Manifests that cannot be read are returned as refused.
func Catalog(ctx context.Context, store *objstore.Store, namespace, group string) ([]Entry, []RefusedRecord, error) {
	objs, err := store.List(ctx, objstore.Join(namespace, group, "base")+"/")
	if err != nil {
		return nil, nil, fmt.Errorf("catalog: %w", err)
	}
	var out []Entry
	var refused []RefusedRecord
	for _, o := range objs {
		dir, ok := strings.CutSuffix(o.Key, "/manifest.json")
		if !ok {
			continue
		}
		id := dir[strings.LastIndex(dir, "/")+1:]
		m, err := Read(ctx, store, namespace, group, id)
		if err != nil {
			refused = append(refused, RefusedRecord{Key: o.Key, Err: err})
			continue
		}
		out = append(out, Entry{Manifest: m})
	}
	slices.SortFunc(out, func(a, b Entry) int { return a.Manifest.StopTime.Compare(b.Manifest.StopTime) })
	recs, bad, err := ListArchive(ctx, store, namespace, group)
	if err != nil {
		return out, refused, err
	}
	timeline, terr := ReadTimeline(ctx, store, namespace, group)
	files := planInput(recs)
	for i := range out {
		out[i].Window, out[i].WindowErr = window(out[i].Manifest, files, timeline, len(bad), terr)
	}
	return out, append(refused, bad...), nil
}

// window is one backup's restore window, or why it cannot be judged.
func window(m Manifest, files []topology.ArchivedBinlog, timeline []topology.Promotion, refused int,
	timelineErr error) (topology.PITRWindow, error) {
	empty := topology.PITRWindow{From: m.WindowFrom()}
	switch {
	case timelineErr != nil:
		return empty, timelineErr
	case refused > 0:
		return empty, fmt.Errorf("%w: %d archive records", ErrArchiveRefused, refused)
	}
	base, err := gtid.ParsePos(m.GTIDPosition)
	if err != nil {
		return empty, fmt.Errorf("%w: manifest position %q: %w", ErrInvalid, m.GTIDPosition, err)
	}
	return topology.PITRCoverage(files, timeline, base, m.WindowFrom())
}

// OpenStore reaches the object store spec names, with the credentials
// (and CA, when named) read from Secrets in namespace.
func OpenStore(ctx context.Context, c client.Reader, namespace string, spec v1alpha1.ObjectStoreSpec) (*objstore.Store,
	error) {
	var creds corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: spec.CredentialsSecret}, &creds); err != nil {
		return nil, fmt.Errorf("object store credentials: %w", err)
	}
	cfg := objstore.Config{Endpoint: spec.Endpoint, Region: spec.Region, Bucket: spec.Bucket, Prefix: spec.Prefix,
		PathStyle: spec.PathStyle, AccessKey: string(creds.Data["accessKeyId"]),
		SecretKey: string(creds.Data["secretAccessKey"])}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, fmt.Errorf("%w: Secret %s/%s needs accessKeyId and secretAccessKey", ErrInvalid, namespace,
			spec.CredentialsSecret)
	}
	if spec.CASecret != "" {
		var ca corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: spec.CASecret}, &ca); err != nil {
			return nil, fmt.Errorf("object store CA: %w", err)
		}
		if cfg.CA = ca.Data["ca.crt"]; len(cfg.CA) == 0 {
			return nil, fmt.Errorf("%w: Secret %s/%s has no ca.crt", ErrInvalid, namespace, spec.CASecret)
		}
	}
	store, err := objstore.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	return store, nil
}

// Empty tells whether the window holds no time.
func (e Entry) Empty() bool { return e.Window.To.Before(e.Window.From) }
