package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Reconciler converges each group's objects and keeps its poll loop running.
// Status changes (the loop's own writes) do not trigger it: only spec,
// labels and annotations, owned objects, and the resync period do.
type Reconciler struct {
	Operator *Operator
}

// SetupWithManager registers the Reconciler and the Operator with mgr.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.Add(r.Operator); err != nil {
		return fmt.Errorf("add operator: %w", err)
	}
	changed := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
		predicate.AnnotationChangedPredicate{})
	return ctrl.NewControllerManagedBy(mgr).
		Named("mysqlfailovergroup").
		For(&v1alpha1.MysqlFailoverGroup{}, builder.WithPredicates(changed)).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := r.Operator
	g := &v1alpha1.MysqlFailoverGroup{}
	if err := o.client.Get(ctx, req.NamespacedName, g); err != nil {
		if apierrors.IsNotFound(err) {
			o.StopLoop(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get %s: %w", req.NamespacedName, err)
	}
	if !g.DeletionTimestamp.IsZero() {
		o.StopLoop(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	// The loop first: failure detection must not wait on object convergence.
	if err := o.EnsureLoop(req.NamespacedName); err != nil {
		return ctrl.Result{}, err
	}
	o.plannedReconciled(req.NamespacedName, g)
	if o.router != nil {
		if err := o.router.Converge(ctx, g); err != nil {
			return ctrl.Result{}, fmt.Errorf("converge %s: %w", req.NamespacedName, err)
		}
	}
	return ctrl.Result{RequeueAfter: o.opts.ResyncPeriod}, nil
}
