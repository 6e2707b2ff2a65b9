package plugin

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/pkg/backup"
)

// Backups prints the group's base backups as its object store holds them,
// oldest first: id, site, when it ended, its stored size, its GTID
// position and the span a point-in-time restore from it can reach with
// the archive as it is. Objects it cannot read are listed after them.
func Backups(ctx context.Context, c client.Client, ns, name string, w io.Writer) error {
	g, err := getGroup(ctx, c, ns, name)
	if err != nil {
		return err
	}
	if g.Spec.Backup == nil {
		return fmt.Errorf("%s/%s has no spec.backup: it keeps no backups", ns, name)
	}
	store, err := backup.OpenStore(ctx, c, ns, g.Spec.Backup.ObjectStore)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", ns, name, err)
	}
	entries, refused, err := backup.Catalog(ctx, store, ns, name)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", ns, name, err)
	}
	return wrapWrite(WriteBackups(w, entries, refused))
}

// WriteBackups prints entries and refused objects as Backups does.
func WriteBackups(w io.Writer, entries []backup.Entry, refused []backup.RefusedRecord) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKUP\tSITE\tENDED\tSIZE\tGTID\tRESTORABLE")
	if len(entries) == 0 {
		fmt.Fprintln(tw, "-\t-\t-\t-\t-\tno backups")
	}
	for _, e := range entries {
		m := e.Manifest
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Site, when(m.StopTime), size(m.Size),
			orDash(m.GTIDPosition), restorable(e))
	}
	for _, r := range refused {
		fmt.Fprintf(tw, "refused:\t%s\t%v\n", r.Key, r.Err)
	}
	return tw.Flush()
}

// restorable says what a restore from e can reach.
func restorable(e backup.Entry) string {
	switch {
	case e.WindowErr != nil:
		return "unknown: " + e.WindowErr.Error()
	case e.Empty():
		return "its own end (" + when(e.Window.From) + "); no archived binlog carries it on"
	default:
		return when(e.Window.From) + " to " + when(e.Window.To)
	}
}

// size is n bytes in a unit a person reads.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
