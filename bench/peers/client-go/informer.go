package main

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// writtenAtAnnotation carries the harness's write time in Unix nanoseconds.
const writtenAtAnnotation = "bench.k8s-client.dev/written-at"

// syncTimeout bounds the initial sync so an unreachable apiserver fails the
// run instead of hanging it (the reflector retries forever).
const syncTimeout = 5 * time.Minute

type syncResult struct {
	Workload       string  `json:"workload"`
	Pods           int     `json:"pods"`
	SyncedS        float64 `json:"synced_s"`
	RSSBeforeKiB   int64   `json:"rss_before_kib"`
	RSSAfterKiB    int64   `json:"rss_after_kib"`
	PeakRSSKiB     int64   `json:"peak_rss_kib"`
	RSSPerPodBytes int64   `json:"rss_per_pod_bytes"`
}

func syncPods(kubeconfig string, expect int, dropManaged, json, metadataOnly bool) (*syncResult, error) {
	config, err := restConfig(kubeconfig, json)
	if err != nil {
		return nil, err
	}
	var (
		factory  starter
		informer cache.SharedIndexInformer
	)
	if metadataOnly {
		client, err := metadata.NewForConfig(config)
		if err != nil {
			return nil, err
		}
		factory, informer, err = newPodMetadataInformer(client, dropManaged)
		if err != nil {
			return nil, err
		}
	} else {
		clientset, err := kubernetes.NewForConfig(config)
		if err != nil {
			return nil, err
		}
		factory, informer, err = newPodInformer(clientset, dropManaged)
		if err != nil {
			return nil, err
		}
	}
	before, err := procStatusKiB()
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	defer close(stop)
	synced, err := startAndSync(factory, informer, stop)
	if err != nil {
		return nil, err
	}

	runtime.GC()
	debug.FreeOSMemory()
	after, err := procStatusKiB()
	if err != nil {
		return nil, err
	}
	pods := len(informer.GetStore().List())
	if pods != expect {
		return nil, fmt.Errorf("cache holds %d pods, expected %d", pods, expect)
	}
	if pods == 0 {
		return nil, fmt.Errorf("no pods to measure")
	}
	return &syncResult{
		Workload:       "sync",
		Pods:           pods,
		SyncedS:        synced.Seconds(),
		RSSBeforeKiB:   before["VmRSS"],
		RSSAfterKiB:    after["VmRSS"],
		PeakRSSKiB:     after["VmHWM"],
		RSSPerPodBytes: (after["VmRSS"] - before["VmRSS"]) * 1024 / int64(pods),
	}, nil
}

type churnResult struct {
	Workload   string  `json:"workload"`
	Events     int     `json:"events"`
	EventsPerS float64 `json:"events_per_s"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	CPUS       float64 `json:"cpu_s"`
}

func churn(kubeconfig string, expect int, duration float64) (*churnResult, error) {
	if duration <= 0 {
		return nil, fmt.Errorf("--duration must be positive")
	}
	clientset, err := newClientset(kubeconfig, false)
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	defer close(stop)
	factory, informer, err := newPodInformer(clientset, true)
	if err != nil {
		return nil, err
	}
	// Latencies in ms of the updates seen while recording, i.e. between
	// ready and the end of the window.
	var (
		mu        sync.Mutex
		recording bool
		ms        []float64
	)
	setRecording := func(on bool) { mu.Lock(); recording = on; mu.Unlock() }
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, newObj any) {
			now := time.Now().UnixNano() // before parsing, which is not latency
			pod, ok := newObj.(*corev1.Pod)
			if !ok {
				return
			}
			stamp, ok := pod.Annotations[writtenAtAnnotation]
			written, err := strconv.ParseInt(stamp, 10, 64)
			if !ok || err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if recording {
				ms = append(ms, float64(now-written)/1e6)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := startAndSync(factory, informer, stop); err != nil {
		return nil, err
	}
	if pods := len(informer.GetStore().List()); pods != expect {
		return nil, fmt.Errorf("cache holds %d pods, expected %d", pods, expect)
	}

	cpuStart := cpuTime()
	setRecording(true)
	fmt.Println("ready") // os.Stdout is unbuffered: the harness sees it now
	time.Sleep(time.Duration((duration + 3) * float64(time.Second)))
	setRecording(false)
	cpuEnd := cpuTime()
	sort.Float64s(ms) // no handler appends once recording is off

	return &churnResult{
		Workload:   "churn",
		Events:     len(ms),
		EventsPerS: float64(len(ms)) / duration,
		P50Ms:      percentile(ms, 0.50),
		P99Ms:      percentile(ms, 0.99),
		CPUS:       (cpuEnd - cpuStart).Seconds(),
	}, nil
}

// newClientset: with json false, as client-go comes: its generated clients
// of built-in kinds ask for protobuf when no content type is set.
func newClientset(kubeconfig string, json bool) (*kubernetes.Clientset, error) {
	config, err := restConfig(kubeconfig, json)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(config)
}

// restConfig is the configuration of newClientset.
func restConfig(kubeconfig string, json bool) (*rest.Config, error) {
	if kubeconfig == "" {
		return nil, fmt.Errorf("--kubeconfig is required")
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// The default 5 QPS / 10 burst would measure client-side throttling,
	// not the client.
	config.QPS = 1000
	config.Burst = 2000
	if json {
		config.ContentType = "application/json"
		config.AcceptContentTypes = "application/json"
	}
	return config, nil
}

// starter is what startAndSync needs of an informer factory (typed or metadata).
type starter interface {
	Start(stopCh <-chan struct{})
}

// newPodMetadataInformer returns a metadata informer factory without resync
// and its all-namespaces informer of the pods' metadata.
func newPodMetadataInformer(client metadata.Interface, dropManaged bool) (metadatainformer.SharedInformerFactory, cache.SharedIndexInformer, error) {
	factory := metadatainformer.NewSharedInformerFactory(client, 0)
	informer := factory.ForResource(corev1.SchemeGroupVersion.WithResource("pods")).Informer()
	if dropManaged {
		if err := informer.SetTransform(dropManagedFields); err != nil {
			return nil, nil, err
		}
	}
	return factory, informer, nil
}

// newPodInformer returns a factory without resync and its all-namespaces pod
// informer (registered with the factory, so factory.Start runs it).
func newPodInformer(clientset kubernetes.Interface, dropManaged bool) (informers.SharedInformerFactory, cache.SharedIndexInformer, error) {
	factory := informers.NewSharedInformerFactory(clientset, 0)
	informer := factory.Core().V1().Pods().Informer()
	if dropManaged {
		// Must be set before the informer starts.
		if err := informer.SetTransform(dropManagedFields); err != nil {
			return nil, nil, err
		}
	}
	return factory, informer, nil
}

// dropManagedFields is the transform that clears managedFields before the
// object is cached. Deletions seen only on relist arrive as
// cache.DeletedFinalStateUnknown tombstones; those pass through unchanged.
func dropManagedFields(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		o.ManagedFields = nil
	case *metav1.PartialObjectMetadata:
		o.ManagedFields = nil
	}
	return obj, nil
}

// startAndSync runs the informer and returns the time until its cache has
// synced. It polls HasSynced every millisecond rather than using
// cache.WaitForCacheSync, whose 100 ms poll period would round the figure up.
func startAndSync(factory starter, informer cache.SharedIndexInformer, stop <-chan struct{}) (time.Duration, error) {
	start := time.Now()
	factory.Start(stop)
	deadline := time.After(syncTimeout)
	ticker := time.NewTicker(time.Millisecond)
	defer ticker.Stop()
	for !informer.HasSynced() {
		select {
		case <-ticker.C:
		case <-deadline:
			return 0, fmt.Errorf("informer not synced after %s", syncTimeout)
		}
	}
	return time.Since(start), nil
}

// cpuTime is the process's user + system CPU time so far. getrusage cannot
// fail for RUSAGE_SELF with a valid pointer.
func cpuTime() time.Duration {
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// percentile by nearest rank over sorted values; 0 when there are none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(rank, 0)]
}
