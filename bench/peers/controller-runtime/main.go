// Command controller-runtime-operator is the controller-runtime program of
// the operator workload of `make bench-peers` (see ../PROTOCOL.md): the
// Greeting operator, written as kubebuilder lays one out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

const (
	finalizerName = "example.com/greeting-cleanup"
	// The field index of ConfigMaps by the name of the Greeting that controls them.
	ownerKey = ".metadata.controller"
)

func main() {
	// controller-runtime registers --kubeconfig itself; without it,
	// ctrl.GetConfig reads $KUBECONFIG.
	namespace := flag.String("namespace", "", "the namespace to watch (required)")
	qps := flag.Float64("qps", 50, "client requests per second (burst: twice as many)")
	flag.Parse()
	if err := run(*namespace, *qps); err != nil {
		fmt.Fprintln(os.Stderr, "controller-runtime-operator:", err)
		os.Exit(1)
	}
}

func run(namespace string, qps float64) error {
	if namespace == "" {
		return errors.New("--namespace is required")
	}
	if qps <= 0 {
		return errors.New("--qps must be positive")
	}
	ctrl.SetLogger(zap.New())

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := SchemeBuilder.AddToScheme(scheme); err != nil {
		return err
	}

	config, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	config.QPS = float32(qps)
	config.Burst = int(2 * qps)

	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme: scheme,
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		// None of the other programs serves metrics.
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return err
	}

	ctx := ctrl.SetupSignalHandler()
	err = mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, ownerKey, func(o client.Object) []string {
		owner := metav1.GetControllerOf(o)
		if owner == nil || owner.APIVersion != GroupVersion.String() || owner.Kind != "Greeting" {
			return nil
		}
		return []string{owner.Name}
	})
	if err != nil {
		return err
	}

	err = ctrl.NewControllerManagedBy(mgr).
		// Its own status writes change no generation, so they enqueue nothing.
		For(&Greeting{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(&GreetingReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// GreetingReconciler keeps each Greeting's ConfigMaps.
type GreetingReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// Reconcile brings the ConfigMaps of one Greeting to its spec, or removes
// them when it is being deleted. Reads come from the manager's cache.
func (r *GreetingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var g Greeting
	if err := r.Get(ctx, req.NamespacedName, &g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !g.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(&g, finalizerName) {
			return ctrl.Result{}, nil
		}
		owned, err := r.owned(ctx, &g)
		if err != nil {
			return ctrl.Result{}, err
		}
		for i := range owned {
			if err := r.Delete(ctx, &owned[i]); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
		}
		controllerutil.RemoveFinalizer(&g, finalizerName)
		return ctrl.Result{}, r.Update(ctx, &g)
	}

	if controllerutil.AddFinalizer(&g, finalizerName) {
		if err := r.Update(ctx, &g); err != nil {
			return ctrl.Result{}, err
		}
	}

	replicas := 1
	if g.Spec.Replicas != nil {
		replicas = int(*g.Spec.Replicas)
	}
	wanted := make(map[string]bool, replicas)
	for i := range replicas {
		name := fmt.Sprintf("%s-%d", g.Name, i)
		wanted[name] = true
		if err := r.ensureConfigMap(ctx, &g, name); err != nil {
			return ctrl.Result{}, err
		}
	}
	owned, err := r.owned(ctx, &g)
	if err != nil {
		return ctrl.Result{}, err
	}
	for i := range owned {
		if !wanted[owned[i].Name] {
			if err := r.Delete(ctx, &owned[i]); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
		}
	}

	changed := g.Status.ObservedGeneration != g.Generation
	g.Status.ObservedGeneration = g.Generation
	if meta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{
		Type:               "Ready",
		Status:             metav1.ConditionTrue,
		ObservedGeneration: g.Generation,
		Reason:             "Reconciled",
		Message:            fmt.Sprintf("ConfigMaps up to date: %d", replicas),
	}) {
		changed = true
	}
	if changed {
		return ctrl.Result{}, r.Status().Update(ctx, &g)
	}
	return ctrl.Result{}, nil
}

// ensureConfigMap creates ConfigMap name for g, or puts back its message
// and controller reference when they differ (other keys are left as they are).
func (r *GreetingReconciler) ensureConfigMap(ctx context.Context, g *Greeting, name string) error {
	var cm corev1.ConfigMap
	err := r.Get(ctx, types.NamespacedName{Namespace: g.Namespace, Name: name}, &cm)
	if apierrors.IsNotFound(err) {
		cm = corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.Namespace},
			Data:       map[string]string{"message": g.Spec.Message},
		}
		if err := controllerutil.SetControllerReference(g, &cm, r.Scheme); err != nil {
			return err
		}
		return r.Create(ctx, &cm)
	}
	if err != nil {
		return err
	}
	if message, ok := cm.Data["message"]; ok && message == g.Spec.Message && metav1.IsControlledBy(&cm, g) {
		return nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["message"] = g.Spec.Message
	if err := controllerutil.SetControllerReference(g, &cm, r.Scheme); err != nil {
		return err
	}
	return r.Update(ctx, &cm)
}

// owned lists, from the cache, the ConfigMaps g controls.
func (r *GreetingReconciler) owned(ctx context.Context, g *Greeting) ([]corev1.ConfigMap, error) {
	var list corev1.ConfigMapList
	if err := r.List(ctx, &list, client.InNamespace(g.Namespace), client.MatchingFields{ownerKey: g.Name}); err != nil {
		return nil, err
	}
	// The index holds the owner's name: a ConfigMap of an earlier Greeting
	// of the same name is not this one's.
	owned := list.Items[:0]
	for _, cm := range list.Items {
		if metav1.IsControlledBy(&cm, g) {
			owned = append(owned, cm)
		}
	}
	return owned, nil
}
