package scalebench

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// StatusWrites counts the changes of groups' status seen on a watch: each
// one is a status write the API server and etcd took.
type StatusWrites struct {
	n    atomic.Int64
	mu   sync.Mutex
	last map[string]string
}

// Count is the status changes seen so far.
func (w *StatusWrites) Count() int64 { return w.n.Load() }

// WatchStatus counts status changes of the groups in ns until ctx ends,
// re-opening the watch when the server closes it.
func WatchStatus(ctx context.Context, c client.WithWatch, ns string) *StatusWrites {
	w := &StatusWrites{last: map[string]string{}}
	go func() {
		for ctx.Err() == nil {
			wi, err := c.Watch(ctx, &v1alpha1.MysqlFailoverGroupList{}, client.InNamespace(ns))
			if err != nil {
				time.Sleep(time.Second)
				continue
			}
			w.drain(ctx, wi)
		}
	}()
	return w
}

func (w *StatusWrites) drain(ctx context.Context, wi watch.Interface) {
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			g, ok := ev.Object.(*v1alpha1.MysqlFailoverGroup)
			if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			b, _ := json.Marshal(g.Status)
			w.mu.Lock()
			prev, seen := w.last[g.Name]
			w.last[g.Name] = string(b)
			w.mu.Unlock()
			if seen && prev != string(b) {
				w.n.Add(1)
			}
		}
	}
}

// ServeCertificates gives each stand-in the certificate the operator
// issued into its site's TLS Secret, checking every second until ctx ends.
func ServeCertificates(ctx context.Context, c client.Client, f *Fleet) {
	seen := map[string]string{}
	for ctx.Err() == nil {
		var list corev1.SecretList
		if err := c.List(ctx, &list, client.InNamespace(f.NS)); err == nil {
			for _, s := range list.Items {
				name, ok := strings.CutSuffix(s.Name, "-tls")
				if !ok || seen[s.Name] == s.ResourceVersion {
					continue
				}
				group, site, ok := strings.Cut(name, "-")
				if !ok {
					continue
				}
				if f.SetCertificate(group, site, s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]) == nil {
					seen[s.Name] = s.ResourceVersion
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
