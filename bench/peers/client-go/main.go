// Command client-go-peer is the client-go program of `make bench-peers`: one
// subcommand per workload, figures as one JSON object on the last line of
// stdout (see ../PROTOCOL.md).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
)

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: %s decode|encode-protobuf|sync|churn|workqueue [flags]", os.Args[0]))
	}
	cmd, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var run func() (any, error)
	switch cmd {
	case "decode":
		file := fs.String("file", "", "PodList file, JSON or protobuf (not gzipped)")
		rounds := fs.Int("rounds", 10, "timed decodes after one warm-up")
		run = func() (any, error) { return decode(*file, *rounds) }
	case "encode-protobuf":
		in := fs.String("in", "", "PodList JSON file (gzipped or not)")
		out := fs.String("out", "", "where to write its protobuf encoding")
		run = func() (any, error) { return encodeProtobuf(*in, *out) }
	case "sync":
		kubeconfig := fs.String("kubeconfig", "", "kubeconfig path")
		expect := fs.Int("expect", 0, "pods the cache must hold once synced")
		drop := fs.Bool("drop-managed-fields", false, "clear metadata.managedFields before caching")
		json := fs.Bool("json", false, "talk JSON to the apiserver (client-go's clients prefer protobuf for built-in kinds)")
		metadata := fs.Bool("metadata", false, "cache the pods' metadata only (metadatainformer, PartialObjectMetadata)")
		run = func() (any, error) { return syncPods(*kubeconfig, *expect, *drop, *json, *metadata) }
	case "churn":
		kubeconfig := fs.String("kubeconfig", "", "kubeconfig path")
		expect := fs.Int("expect", 0, "pods the cache must hold once synced")
		duration := fs.Float64("duration", 10, "seconds the harness writes for")
		run = func() (any, error) { return churn(*kubeconfig, *expect, *duration) }
	case "workqueue":
		workers := fs.Int("workers", 4, "worker goroutines")
		items := fs.Int("items", 100000, "distinct keys to process")
		rounds := fs.Int("rounds", 5, "timed rounds, each with a new queue, after one warm-up")
		run = func() (any, error) { return workQueue(*workers, *items, *rounds) }
	default:
		fail(fmt.Errorf("unknown subcommand %q (want decode, encode-protobuf, sync, churn or workqueue)", cmd))
	}
	if err := fs.Parse(args); err != nil {
		os.Exit(1) // the flag package has already printed the error and usage
	}
	result, err := run()
	if err != nil {
		fail(fmt.Errorf("%s: %w", cmd, err))
	}
	line, err := json.Marshal(result)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(line))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "client-go-peer:", err)
	os.Exit(1)
}

type decodeResult struct {
	Workload        string  `json:"workload"`
	Pods            int     `json:"pods"`
	Bytes           int     `json:"bytes"`
	MedianS         float64 `json:"median_s"`
	MinS            float64 `json:"min_s"`
	HeapBytesPerPod int64   `json:"heap_bytes_per_pod"`
}

func decode(file string, rounds int) (*decodeResult, error) {
	if file == "" || rounds < 1 {
		return nil, fmt.Errorf("--file is required and --rounds must be at least 1")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	// The deserializer clientsets use: it picks the Go type from the
	// document's apiVersion/kind and does no conversion or defaulting.
	decoder := scheme.Codecs.UniversalDeserializer()
	decodeOnce := func() (*corev1.PodList, error) {
		obj, _, err := decoder.Decode(data, nil, nil)
		if err != nil {
			return nil, err
		}
		list, ok := obj.(*corev1.PodList)
		if !ok {
			return nil, fmt.Errorf("%s holds a %T, not a PodList", file, obj)
		}
		return list, nil
	}

	warm, err := decodeOnce()
	if err != nil {
		return nil, err
	}
	pods := len(warm.Items)
	if pods == 0 {
		return nil, fmt.Errorf("%s holds no pods", file)
	}

	times := make([]float64, rounds)
	for i := range times {
		start := time.Now()
		if _, err := decodeOnce(); err != nil {
			return nil, err
		}
		times[i] = time.Since(start).Seconds()
	}
	sort.Float64s(times)

	// Live heap of one decoded list: everything else (the input bytes, the
	// scheme, earlier lists) is either still reachable on both sides of the
	// difference or collected before the first reading.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	list, err := decodeOnce()
	if err != nil {
		return nil, err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(list)
	runtime.KeepAlive(data)

	return &decodeResult{
		Workload:        "decode",
		Pods:            pods,
		Bytes:           len(data),
		MedianS:         median(times),
		MinS:            times[0],
		HeapBytesPerPod: (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(pods),
	}, nil
}

type workQueueResult struct {
	Workload string  `json:"workload"`
	Items    int     `json:"items"`
	Workers  int     `json:"workers"`
	Rounds   int     `json:"rounds"`
	Seconds  float64 `json:"seconds"`
	OpsPerS  float64 `json:"ops_per_s"`
}

// workQueue reports the median of rounds timed workQueueRound runs after one
// warm-up (one round of a few dozen milliseconds is mostly noise and
// first-touched memory).
func workQueue(workers, items, rounds int) (*workQueueResult, error) {
	if workers < 1 || items < 1 || rounds < 1 {
		return nil, fmt.Errorf("--workers, --items and --rounds must be at least 1")
	}
	workQueueRound(workers, items)
	times := make([]float64, rounds)
	for i := range times {
		times[i] = workQueueRound(workers, items)
	}
	sort.Float64s(times)
	seconds := times[rounds/2]
	return &workQueueResult{
		Workload: "workqueue",
		Items:    items,
		Workers:  workers,
		Rounds:   rounds,
		Seconds:  seconds,
		OpsPerS:  float64(items) / seconds,
	}, nil
}

// workQueueRound has one goroutine add items distinct keys while workers
// goroutines get, forget and done them; the seconds until the last is done.
func workQueueRound(workers, items int) float64 {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	var processed atomic.Int64
	var wg sync.WaitGroup

	start := time.Now()
	go func() {
		for i := range items {
			queue.Add(fmt.Sprintf("ns/pod-%d", i))
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, shutdown := queue.Get()
				if shutdown {
					return
				}
				queue.Forget(key)
				queue.Done(key)
				// The worker that completes the last item shuts the queue
				// down, which wakes the others blocked in Get.
				if processed.Add(1) == int64(items) {
					queue.ShutDown()
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start).Seconds()
}

// median of sorted values; the mean of the two middle ones for an even count.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// procStatusKiB reads the "VmRSS:  1234 kB"-style lines of /proc/self/status.
func procStatusKiB() (map[string]int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	fields := map[string]int64{}
	for line := range strings.Lines(string(data)) {
		name, value, _ := strings.Cut(line, ":")
		if kib, ok := strings.CutSuffix(strings.TrimSpace(value), " kB"); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(kib), 10, 64); err == nil {
				fields[name] = n
			}
		}
	}
	if _, ok := fields["VmRSS"]; !ok {
		return nil, fmt.Errorf("no VmRSS in /proc/self/status")
	}
	return fields, nil
}
