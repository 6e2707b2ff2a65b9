package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/playground/install"
)

func init() {
	register(Scenario{24, "operator-upgrade", "under load, helm upgrade to a new operator release that ships a new sidecar image: " +
		"the new operator rolls the sites one at a time, the primary last after one switchover; nothing lost", operatorUpgrade})
}

// The new release: another operator image tag and the sidecar image it
// ships (--sidecar-image, as a release built with another default would
// render). The local cluster runs bin/operator and bin/sidecar for any tag
// of their images, so the Pods change as with a real release and the same
// programs run: the scenario tests the upgrade's path (the operator Pod
// replaced, the leader-election Lease handed over, every site's Pod
// template changed by the operator rather than by the spec), not a
// change of code.
const upgradeTag = "rolling"

var upgradeArgs = fmt.Sprintf(`extraArgs=["--sidecar-image=%s"]`, rollingImage)

func operatorUpgrade(ctx context.Context, e *Env) (r Result) {
	old, err := e.OperatorPod(ctx)
	if err != nil {
		return r.fail(err)
	}
	// Put the release back as it was for the scenarios that follow on
	// this cluster, once the group is gone.
	defer func() {
		if err := e.restoreRelease(context.WithoutCancel(ctx)); err != nil {
			r.Failf("restore the operator release: %v", err)
		}
	}()
	upgrade := rollChange{apply: func(ctx context.Context, g *Group) error {
		if err := install.Upgrade(ctx, e.C, install.Chart{Root: e.Root,
			Set: []string{"image.tag=" + upgradeTag}, SetJSON: []string{upgradeArgs}}); err != nil {
			return err
		}
		return e.waitNewOperator(ctx, old)
	}}
	r = rollingUpdateWith(ctx, e, "operator-upgrade", LoadOptions{}, upgrade)
	if now, err := e.OperatorPod(ctx); err == nil && now == old {
		r.Failf("the operator Pod %s was not replaced by the upgrade", old)
	}
	return r
}

// waitNewOperator waits until the one running operator Pod is another
// than old, and Ready behind its Service.
func (e *Env) waitNewOperator(ctx context.Context, old string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pod, err := e.OperatorPod(ctx)
		if err == nil && pod != old {
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			return install.WaitOperator(wctx, e.C, "bloodraven-system", "bloodraven")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the upgraded operator Pod is not the only one running: %s (%v)", pod, err)
		}
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// restoreRelease puts the operator's image tag and extra arguments back
// to the chart's defaults and waits until that operator runs alone.
func (e *Env) restoreRelease(ctx context.Context) error {
	old, err := e.OperatorPod(ctx)
	if err != nil {
		return err
	}
	if err := install.Upgrade(ctx, e.C, install.Chart{Root: e.Root,
		Set: []string{"image.tag="}, SetJSON: []string{"extraArgs=[]"}}); err != nil {
		return err
	}
	return e.waitNewOperator(ctx, old)
}
