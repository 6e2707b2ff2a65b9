package supervisor

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// StorageClass is the default class; its volumes are folders under the
// state folder and outlive their Pods.
const (
	StorageClass = "standard"
	Provisioner  = "bloodraven.local/process-node"
)

// startProvisioner makes the default StorageClass and gives every pending
// claim of that class a hostPath PersistentVolume, pre-bound to it.
func startProvisioner(ctx context.Context, client kubernetes.Interface, dir string, logf func(string, ...any)) error {
	bind := storagev1.VolumeBindingImmediate
	retain := corev1.PersistentVolumeReclaimRetain
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: StorageClass, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       Provisioner,
		VolumeBindingMode: &bind,
		ReclaimPolicy:     &retain,
	}
	if _, err := client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("storage class: %w", err)
	}
	f := informers.NewSharedInformerFactory(client, 30*time.Second)
	inf := f.Core().V1().PersistentVolumeClaims().Informer()
	handle := func(obj any) {
		if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok {
			if err := provision(ctx, client, dir, pvc); err != nil && ctx.Err() == nil {
				logf("provisioner: %v", err)
			}
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: handle, UpdateFunc: func(_, o any) { handle(o) }})
	if err != nil {
		return fmt.Errorf("claim informer: %w", err)
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return nil
}

func provision(ctx context.Context, client kubernetes.Interface, dir string, pvc *corev1.PersistentVolumeClaim) error {
	if pvc.Spec.VolumeName != "" || pvc.DeletionTimestamp != nil {
		return nil
	}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	if class != StorageClass {
		return nil
	}
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	hostType := corev1.HostPathDirectoryOrCreate
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(pvc.UID), Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": Provisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              StorageClass,
			VolumeMode:                    pvc.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: filepath.Join(dir, fmt.Sprintf("%s_%s_%s", pvc.Namespace, pvc.Name, pvc.UID)), Type: &hostType}},
		},
	}
	_, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("volume for claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	return nil
}
