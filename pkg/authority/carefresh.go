package authority

import (
	"bytes"
	"context"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/pki/casecret"
)

// CARefresher reads the CA Secret again every Period and hands a changed CA
// (a rotation step, docs/security.md) to the Keeper, which the API, the
// nudges and routing's site certificates all read. A Secret that cannot be
// read or parsed leaves the current CA in place. It runs on every replica.
type CARefresher struct {
	Keeper    *pki.Keeper
	Reader    client.Reader
	Namespace string
	Name      string
	Period    time.Duration
	Log       logr.Logger
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (c *CARefresher) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (c *CARefresher) Start(ctx context.Context) error {
	period := c.Period
	if period <= 0 {
		period = time.Minute
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.refresh(ctx)
		}
	}
}

func (c *CARefresher) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ca, err := casecret.Load(ctx, c.Reader, c.Namespace, c.Name)
	if err != nil {
		c.Log.Error(err, "reload CA; keeping the current one")
		return
	}
	cur := c.Keeper.CA()
	if cur != nil && cur.Cert.Equal(ca.Cert) && bytes.Equal(cur.BundlePEM(), ca.BundlePEM()) {
		return
	}
	c.Keeper.SetCA(ca)
	c.Log.Info("CA changed", "subject", ca.Cert.Subject.CommonName, "notAfter", ca.Cert.NotAfter,
		"trusted", len(ca.Bundle))
}
