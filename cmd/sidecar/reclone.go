package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// recloneOptions turn on the reclone endpoint (docs/recovery.md): where
// mysqld's data lives as this container sees it, where earlier data is
// kept, and how mysqld is stopped and started (its hold file).
type recloneOptions struct {
	dataDir, preserveRoot, dir, holdFile string
	// backup and mbstream are the binaries, resolved at start.
	backup, mbstream string
	defaultsFile     string
}

// recloneFlags are the flags that only mean something with -reclone-data-dir.
var recloneFlags = []string{"reclone-preserve-root", "reclone-dir", "mysqld-hold-file"}

// parseReclone reads the reclone flags; nil when -reclone-data-dir is
// empty. Everything a reclone needs is checked here, so that a sidecar
// asked to reclone either can or does not start.
func parseReclone(get func(string) string, tlsDir string, peers []sidecar.Peer) (*recloneOptions, error) {
	r := &recloneOptions{dataDir: get("reclone-data-dir"), preserveRoot: get("reclone-preserve-root"),
		dir: get("reclone-dir"), holdFile: get("mysqld-hold-file"), defaultsFile: get("clone-defaults-file")}
	if r.dataDir == "" {
		for _, f := range recloneFlags {
			if get(f) != "" {
				return nil, fmt.Errorf("%w: -%s needs -reclone-data-dir (the reclone endpoint is off without it)", errUsage, f)
			}
		}
		return nil, nil
	}
	var missing []string
	for _, f := range recloneFlags {
		if get(f) == "" {
			missing = append(missing, "-"+f)
		}
	}
	switch {
	case len(missing) > 0:
		return nil, fmt.Errorf("%w: -reclone-data-dir needs %s", errUsage, strings.Join(missing, ", "))
	case tlsDir == "":
		return nil, fmt.Errorf("%w: -reclone-data-dir needs -tls-dir: only the operator's certificate may ask for a reclone", errUsage)
	case len(peers) == 0:
		return nil, fmt.Errorf("%w: -reclone-data-dir needs -peers: a clone is taken from another site", errUsage)
	}
	var err error
	if r.backup, err = exec.LookPath(get("mariadb-backup")); err != nil {
		return nil, fmt.Errorf("%w: -mariadb-backup: a reclone needs it in this container: %w", errUsage, err)
	}
	if r.mbstream, err = exec.LookPath(get("mbstream")); err != nil {
		return nil, fmt.Errorf("%w: -mbstream: a reclone needs it in this container: %w", errUsage, err)
	}
	return r, nil
}

// recloneExecutor is the site's Executor over mysqld db. The Runner fills
// in its view and certificate source (pkg/sidecar, mountReclone).
func recloneExecutor(r *recloneOptions, c sidecar.Config, src pki.Source, db mysql.Instance, logger *slog.Logger) (*reclone.Executor, error) {
	cl, ok := db.(mysql.Cloner)
	if !ok {
		return nil, fmt.Errorf("reclone: the mysqld connection cannot seed a position")
	}
	urls := map[string]string{}
	var donors []string
	for _, p := range c.Peers {
		urls[p.Name] = strings.TrimSuffix(p.URL, "/")
		donors = append(donors, p.Name)
	}
	e := &reclone.Executor{Namespace: c.Namespace, Group: c.Group, Site: c.Site, Dir: r.dir,
		DataDir: r.dataDir, PreserveRoot: r.preserveRoot, DB: siteDB{db, cl}, Donors: donors, TLS: src,
		Mysqld: reclone.HoldFile{Path: r.holdFile, Shutdown: db.Shutdown, Answers: func(ctx context.Context) bool {
			_, err := db.Status(ctx)
			return err == nil
		}},
		Logger: logger.With("component", "reclone"),
		Receiver: func(donor string) (*clone.Receiver, error) {
			u, ok := urls[donor]
			if !ok {
				return nil, fmt.Errorf("no peer URL for %s", donor)
			}
			want := pki.SiteIdentity(c.Namespace, c.Group, donor)
			// No overall timeout: a clone is bounded by the phase's context.
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientConfig(src, want, time.Now)}}
			return &clone.Receiver{URL: u + clone.PathClone, Client: hc, DefaultsFile: r.defaultsFile,
				Backup: r.backup, Mbstream: r.mbstream, Logger: logger.With("component", "clone-receiver")}, nil
		}}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	return e, nil
}

// siteDB is mysqld as the Executor needs it: an Instance that seeds.
type siteDB struct {
	mysql.Instance
	cl mysql.Cloner
}

func (s siteDB) SeedPosition(ctx context.Context, pos string) error {
	return s.cl.SeedPosition(ctx, pos)
}

// SeedPositionWith seeds the clone's binlog state too (reclone.HistorySeeder).
func (s siteDB) SeedPositionWith(ctx context.Context, pos, state string) error {
	hs, ok := s.Instance.(reclone.HistorySeeder)
	if !ok {
		return s.cl.SeedPosition(ctx, pos)
	}
	return hs.SeedPositionWith(ctx, pos, state)
}
