//go:build !specsonly

package main

// `kube-testenv node`: a fake node for the test apiserver. It registers the
// Node object, runs the containers of pods bound to it as local processes
// (node_runtime.go) and serves the kubelet's streaming and log endpoints
// (node_server.go), so exec, attach, port-forward and logs work through the
// real apiserver. See testenv/README.md for what it does not do.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/version"
	"k8s.io/cri-streaming/pkg/streaming"
)

type nodeAgent struct {
	cs      kubernetes.Interface
	dir     string
	rt      *nodeRuntime
	pods    cache.Indexer
	queue   workqueue.TypedRateLimitingInterface[string]
	streams streaming.Server
	port    int
}

func runNode(args []string) error {
	fs := flag.NewFlagSet("node", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	dir := fs.String("state-dir", "", "directory for pod working dirs and container logs")
	port := fs.Int("port", 0, "kubelet API port on 127.0.0.1")
	certFile := fs.String("tls-cert-file", "", "serving certificate (IP SAN 127.0.0.1)")
	keyFile := fs.String("tls-private-key-file", "", "serving key")
	clientCA := fs.String("client-ca-file", "", "CA that signs the apiserver's client certificate")
	_ = fs.Parse(args)

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = "kube-testenv-node"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	a := &nodeAgent{
		cs: cs, dir: *dir, port: *port,
		rt:    &nodeRuntime{pods: map[types.UID]*podRun{}},
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	// The CRI streaming server, as a container runtime runs it: plain HTTP on
	// loopback; the kubelet API below hands out its one-time URLs and proxies
	// to them, as the kubelet does.
	streamLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	streamCfg := streaming.DefaultConfig
	streamCfg.Addr = streamLn.Addr().String()
	streamCfg.BaseURL = &url.URL{Scheme: "http", Host: streamCfg.Addr}
	if a.streams, err = streaming.NewServer(streamCfg, a.rt); err != nil {
		return err
	}
	go func() { _ = http.Serve(streamLn, a.streams) }()

	kubeletSrv, err := a.kubeletServer(*certFile, *keyFile, *clientCA)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	if err != nil {
		return fmt.Errorf("kubelet API port: %w", err)
	}
	go func() { _ = kubeletSrv.ServeTLS(ln, "", "") }()

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
	}))
	inf := factory.Core().V1().Pods().Informer()
	a.pods = inf.GetIndexer()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			a.queue.Add(key)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	})
	factory.Start(ctx.Done())

	if err := a.register(ctx); err != nil {
		return fmt.Errorf("registering node %s: %w", nodeName, err)
	}
	fmt.Fprintf(os.Stderr, "kube-testenv node: %s ready, kubelet API on https://%s\n", nodeName, ln.Addr())
	go func() {
		for a.processNext(ctx) {
		}
	}()
	<-ctx.Done()
	a.queue.ShutDown()
	_ = kubeletSrv.Close()
	a.rt.mu.Lock()
	pods := a.rt.pods
	a.rt.mu.Unlock()
	// The testenv is going away: no grace for the containers.
	for _, p := range pods {
		p.terminate(0)
	}
	return nil
}

func (a *nodeAgent) kubeletServer(certFile, keyFile, clientCAFile string) (*http.Server, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(clientCAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s: no certificate", clientCAFile)
	}
	return &http.Server{
		Handler: a.kubeletMux(),
		// Any client certificate from the testenv CA is accepted; only the
		// apiserver has one (the kubelet would also authorize it via RBAC).
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{pair},
			ClientCAs:    pool,
			ClientAuth:   tls.RequireAndVerifyClientCert,
			// Upgrades (SPDY, WebSocket) need HTTP/1.1.
			NextProtos: []string{"http/1.1"},
			MinVersion: tls.VersionTLS12,
		},
		ReadHeaderTimeout: 30 * time.Second,
	}, nil
}

// register creates (or takes over) the Node with a Ready status and no
// taints, as the kubelet plus the node lifecycle controller would leave it.
func (a *nodeAgent) register(ctx context.Context) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{
		corev1.LabelHostname: nodeName, corev1.LabelOSStable: runtime.GOOS, corev1.LabelArchStable: runtime.GOARCH,
	}}}
	if _, err := a.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := a.cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		// TaintNodesByCondition admission adds not-ready on create.
		if len(cur.Spec.Taints) > 0 {
			cur.Spec.Taints = nil
			if cur, err = a.cs.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		now := metav1.Now()
		capacity := corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
			corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
		}
		cur.Status = corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kube-testenv node is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
			}},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
				{Type: corev1.NodeHostName, Address: nodeName},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(a.port)}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: version.Get().GitVersion, OperatingSystem: runtime.GOOS, Architecture: runtime.GOARCH,
				ContainerRuntimeVersion: "testenv://" + version.Get().GitVersion,
			},
		}
		_, err = a.cs.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

func (a *nodeAgent) processNext(ctx context.Context) bool {
	key, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(key)
	if err := a.sync(ctx, key); err != nil {
		fmt.Fprintf(os.Stderr, "kube-testenv node: pod %s: %v\n", key, err)
		a.queue.AddRateLimited(key)
		return true
	}
	a.queue.Forget(key)
	return true
}

// sync brings one pod's processes and status in line with its object.
func (a *nodeAgent) sync(ctx context.Context, key string) error {
	obj, exists, err := a.pods.GetByKey(key)
	if err != nil {
		return err
	}
	namespace, name, _ := cache.SplitMetaNamespaceKey(key)
	if !exists {
		// Gone (deleted at once): nothing may keep running.
		if p := a.rt.podByName(namespace, name); p != nil {
			a.forget(p, 0)
		}
		return nil
	}
	pod := obj.(*corev1.Pod)
	a.rt.mu.Lock()
	p := a.rt.pods[pod.UID]
	a.rt.mu.Unlock()
	// A pod recreated under the same name is a new pod.
	if old := a.rt.podByName(namespace, name); old != nil && old.uid != pod.UID {
		a.forget(old, 0)
	}
	if pod.DeletionTimestamp != nil {
		grace := time.Duration(0)
		if pod.DeletionGracePeriodSeconds != nil {
			grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		}
		go a.finishDeletion(pod, p, grace)
		return nil
	}
	if p == nil {
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			return nil // finished before this node process started
		}
		if p, err = startPod(a.dir, pod); err != nil {
			return err
		}
		a.rt.mu.Lock()
		a.rt.pods[pod.UID] = p
		a.rt.mu.Unlock()
		for _, c := range p.containers {
			go func() {
				<-c.done
				a.queue.Add(key)
			}()
		}
	}
	return a.updateStatus(ctx, pod, p)
}

// finishDeletion kills the processes within the grace period and removes the
// pod, as the kubelet does once its containers have stopped.
func (a *nodeAgent) finishDeletion(pod *corev1.Pod, p *podRun, grace time.Duration) {
	if p != nil {
		a.forget(p, grace)
	}
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	err := a.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions(string(pod.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		fmt.Fprintf(os.Stderr, "kube-testenv node: deleting pod %s/%s: %v\n", pod.Namespace, pod.Name, err)
	}
}

func (a *nodeAgent) forget(p *podRun, grace time.Duration) {
	p.terminate(grace)
	a.rt.mu.Lock()
	delete(a.rt.pods, p.uid)
	a.rt.mu.Unlock()
	_ = os.RemoveAll(p.dir)
}

// updateStatus reports the processes' states: Running while any runs,
// Succeeded/Failed once all have ended (containers are never restarted).
func (a *nodeAgent) updateStatus(ctx context.Context, pod *corev1.Pod, p *podRun) error {
	status := podStatus(pod, p)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := a.cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if cur.UID != pod.UID || cur.DeletionTimestamp != nil {
			return nil
		}
		cur.Status = status
		_, err = a.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

func podStatus(pod *corev1.Pod, p *podRun) corev1.PodStatus {
	started := metav1.NewTime(p.startedAt)
	st := corev1.PodStatus{
		HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}},
		PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}},
		StartTime: &started, QOSClass: corev1.PodQOSBestEffort,
	}
	running, failed := 0, false
	for _, c := range p.containers {
		cs := corev1.ContainerStatus{Name: c.spec.Name, Image: c.spec.Image, ContainerID: c.id}
		if c.running() {
			running++
			cs.Ready, cs.Started = true, ptrTo(true)
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.started)}
		} else {
			cs.Started = ptrTo(false)
			reason := "Completed"
			if c.exitCode != 0 {
				reason, failed = "Error", true
			}
			cs.State.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: c.exitCode, Reason: reason, ContainerID: c.id,
				StartedAt: metav1.NewTime(c.started), FinishedAt: metav1.NewTime(c.finished),
			}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	allReady := running == len(p.containers)
	switch {
	case running > 0:
		st.Phase = corev1.PodRunning
	case failed:
		st.Phase = corev1.PodFailed
	default:
		st.Phase = corev1.PodSucceeded
	}
	cond := func(t corev1.PodConditionType, ok bool) corev1.PodCondition {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
		}
		// Keep the transition time of an unchanged condition.
		for _, old := range pod.Status.Conditions {
			if old.Type == t && old.Status == s {
				return old
			}
		}
		return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.Now()}
	}
	st.Conditions = []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, running > 0),
		cond(corev1.PodInitialized, true),
		cond(corev1.ContainersReady, allReady),
		cond(corev1.PodReady, allReady),
		cond(corev1.PodScheduled, true),
	}
	return st
}

func ptrTo[T any](v T) *T { return &v }

// cmdServeHTTP is a tiny HTTP server for tests of port-forwarding: a pod on
// the node can run the kube-testenv binary itself, which is always there.
func cmdServeHTTP(args []string) error {
	fs := flag.NewFlagSet("serve-http", flag.ExitOnError)
	port := fs.Int("port", 0, "port on 127.0.0.1")
	body := fs.String("body", "kube-testenv serve-http\n", "body of every response")
	_ = fs.Parse(args)
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	fmt.Printf("serving on %s\n", ln.Addr())
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, *body)
	}))
}
