package sim

import "testing"

func TestZZ(t *testing.T) {
	cfg := ConfigForSeed(51, DefaultSteps)
	cfg.Confirmer = NaiveConfirmer{}
	r, _ := Run(cfg)
	t.Log("\n" + r.Report())
}
