package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/objstore"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// PromotionRecord is one entry of a group's timeline in the store: at
// Generation, site To (whose server writes under ToServer) became the
// writer holding Position (its @@gtid_binlog_pos when promoted). A
// point-in-time restore never replays an archived transaction the
// timeline says another server than its own wrote (docs/backups.md).
type PromotionRecord struct {
	Namespace  string    `json:"namespace"`
	Group      string    `json:"group"`
	Generation int64     `json:"generation"`
	Time       time.Time `json:"time"`
	To         string    `json:"to"`
	ToServer   uint32    `json:"toServer"`
	Position   string    `json:"position"`
}

// timelineKey names the record of generation's promotion; zero-padded so
// the store lists records in generation order.
func timelineKey(namespace, group string, generation int64) string {
	return objstore.Join(namespace, group, "timeline", fmt.Sprintf("%020d.json", generation))
}

// RecordPromotion writes one promotion into the group's timeline. Writing
// the same record again is harmless: a record is keyed by its generation.
func RecordPromotion(ctx context.Context, store *objstore.Store, rec PromotionRecord) error {
	if _, err := rec.promotion(); err != nil {
		return err
	}
	if !validName.MatchString(rec.Namespace) || !validName.MatchString(rec.Group) {
		return fmt.Errorf("%w: timeline of namespace %q group %q", ErrInvalid, rec.Namespace, rec.Group)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	key := timelineKey(rec.Namespace, rec.Group, rec.Generation)
	if _, err := store.Put(ctx, key, bytes.NewReader(b), "application/json"); err != nil {
		return fmt.Errorf("timeline %s: %w", key, err)
	}
	return nil
}

// ReadTimeline reads the group's timeline, in the store's listing order (by
// generation, its keys being zero-padded; no user depends on it). A record
// that cannot be read, is malformed or sits under another key than its
// own fails the read: leaving one out could let a restore replay writes
// the group lost, so no plan is made without the whole timeline.
func ReadTimeline(ctx context.Context, store *objstore.Store, namespace, group string) ([]topology.Promotion, error) {
	objs, err := store.List(ctx, objstore.Join(namespace, group, "timeline")+"/")
	if err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	var out []topology.Promotion
	for _, o := range objs {
		if !strings.HasSuffix(o.Key, ".json") {
			continue
		}
		p, err := readPromotion(ctx, store, o.Key, namespace, group)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func readPromotion(ctx context.Context, store *objstore.Store, key, namespace, group string) (topology.Promotion, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return topology.Promotion{}, fmt.Errorf("timeline %s: %w", key, err)
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(io.LimitReader(rc, maxManifest))
	if err != nil {
		return topology.Promotion{}, fmt.Errorf("timeline %s: %w", key, err)
	}
	var rec PromotionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return topology.Promotion{}, fmt.Errorf("%w: timeline %s: %w", ErrInvalid, key, err)
	}
	if rec.Namespace != namespace || rec.Group != group || timelineKey(namespace, group, rec.Generation) != key {
		return topology.Promotion{}, fmt.Errorf("%w: timeline record %s names %s/%s generation %d", ErrInvalid, key,
			rec.Namespace, rec.Group, rec.Generation)
	}
	p, err := rec.promotion()
	if err != nil {
		return topology.Promotion{}, fmt.Errorf("timeline %s: %w", key, err)
	}
	return p, nil
}

// promotion checks the record and turns it into the planner's form.
func (r PromotionRecord) promotion() (topology.Promotion, error) {
	pos, err := gtid.ParsePos(r.Position)
	if err != nil {
		return topology.Promotion{}, fmt.Errorf("%w: promotion position %q: %w", ErrInvalid, r.Position, err)
	}
	if r.Generation <= 0 || !validName.MatchString(r.To) || r.ToServer == 0 {
		return topology.Promotion{}, fmt.Errorf("%w: promotion of %q (server %d) at generation %d", ErrInvalid, r.To,
			r.ToServer, r.Generation)
	}
	return topology.Promotion{Generation: r.Generation, To: r.To, ToServer: r.ToServer, Position: pos}, nil
}
