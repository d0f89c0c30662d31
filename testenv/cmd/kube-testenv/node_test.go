//go:build !specsonly

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/utils/exec"
)

// asMainEnv makes the test binary behave as kube-testenv, so the supervisor
// started by a test re-executes it for etcd, the apiserver and the node, and
// pods can run its serve-http.
const asMainEnv = "KUBE_TESTENV_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startTestEnv starts a supervisor with the default `start` flags in a temp
// dir and returns the admin and unprivileged client configs.
func startTestEnv(t *testing.T) (admin, unprivileged *rest.Config) {
	t.Helper()
	t.Setenv(asMainEnv, "1")
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	o := startFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	o.stateDir = t.TempDir()
	s, err := newSupervisor(*o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.startAll(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.shutdown(0) })
	load := func(context string) *rest.Config {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: s.path(fileKubeconfig)},
			&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	return load("admin"), load("unprivileged")
}

func nodePod(name string, command ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:      nodeName,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "ignored", Command: command}},
		},
	}
}

// waitPod polls until done accepts the pod.
func waitPod(t *testing.T, cs kubernetes.Interface, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		pod, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %s: %v", name, err)
		}
		if done(pod) {
			return pod
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: timed out; status %+v", name, pod.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func running(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }

type fixedSize struct{ sent bool }

func (f *fixedSize) Next() *remotecommand.TerminalSize {
	if f.sent {
		select {} // no further resizes; the stream ends first
	}
	f.sent = true
	return &remotecommand.TerminalSize{Width: 100, Height: 40}
}

func TestNodeThroughAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a testenv")
	}
	cfg, unprivileged := startTestEnv(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()

	node, err := cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Status.Addresses[0].Address != "127.0.0.1" || node.Status.DaemonEndpoints.KubeletEndpoint.Port == 0 || len(node.Spec.Taints) != 0 {
		t.Fatalf("node: %+v %+v", node.Spec, node.Status)
	}

	if _, err := cs.CoreV1().Pods("default").Create(ctx, nodePod("shell", "sh", "-c", "echo hello; sleep 60"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(t, cs, "shell", running)
	status := pod.Status.ContainerStatuses[0]
	if pod.Status.PodIP != "127.0.0.1" || !status.Ready || status.State.Running == nil || !strings.HasPrefix(status.ContainerID, containerIDPrefix) {
		t.Fatalf("status: %+v", pod.Status)
	}

	execURL := func(name string, tty bool, command ...string) *rest.Request {
		return cs.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name(name).SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: "main", Command: command, Stdout: true, Stderr: !tty, TTY: tty}, scheme.ParameterCodec)
	}
	executors := map[string]func(*rest.Request) remotecommand.Executor{
		"websocket": func(r *rest.Request) remotecommand.Executor {
			e, err := remotecommand.NewWebSocketExecutor(cfg, "GET", r.URL().String())
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		"spdy": func(r *rest.Request) remotecommand.Executor {
			e, err := remotecommand.NewSPDYExecutor(cfg, "POST", r.URL())
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
	}
	for proto, executor := range executors {
		var out, errOut bytes.Buffer
		err := executor(execURL("shell", false, "echo", "hi")).StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
		if err != nil || out.String() != "hi\n" {
			t.Fatalf("%s exec echo hi: %v, stdout %q, stderr %q", proto, err, out.String(), errOut.String())
		}
		err = executor(execURL("shell", false, "sh", "-c", "echo oops >&2; exit 3")).StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
		var exitErr utilexec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 3 || errOut.String() != "oops\n" {
			t.Fatalf("%s exec exit 3: %v, stderr %q", proto, err, errOut.String())
		}
		// Stdin reaches the command and its end closes the command's stdin
		// (v5's close signal over WebSocket, the stream's close over SPDY).
		out.Reset()
		stdinReq := cs.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name("shell").SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: "main", Command: []string{"cat"}, Stdin: true, Stdout: true}, scheme.ParameterCodec)
		err = executor(stdinReq).StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("from stdin"), Stdout: &out})
		if err != nil || out.String() != "from stdin" {
			t.Fatalf("%s exec cat: %v, output %q", proto, err, out.String())
		}
		// A pty sized by the client's first resize event.
		out.Reset()
		err = executor(execURL("shell", true, "sh", "-c", "sleep 0.2; stty size; test -t 1")).StreamWithContext(ctx, remotecommand.StreamOptions{
			Stdout: &out, Tty: true, TerminalSizeQueue: &fixedSize{},
		})
		if err != nil || strings.TrimSpace(out.String()) != "40 100" {
			t.Fatalf("%s exec with tty: %v, output %q", proto, err, out.String())
		}
	}

	// The unprivileged user may not exec.
	denied, err := remotecommand.NewSPDYExecutor(unprivileged, "POST", execURL("shell", false, "true").URL())
	if err != nil {
		t.Fatal(err)
	}
	if err := denied.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard}); err == nil || !strings.Contains(strings.ToLower(err.Error()), "forbidden") {
		t.Fatalf("alice's exec: %v", err)
	}

	// Logs: follow sees the output; timestamps are the kubelet's.
	stream, err := cs.CoreV1().Pods("default").GetLogs("shell", &corev1.PodLogOptions{Follow: true, Timestamps: true}).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 64)
	n, err := io.ReadAtLeast(stream, line, len("2006-01-02T15:04:05Z hello\n"))
	stream.Close()
	if err != nil || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z hello\n$`).Match(line[:n]) {
		t.Fatalf("logs -f: %v %q", err, line[:n])
	}
	if _, err := cs.CoreV1().Pods("default").GetLogs("shell", &corev1.PodLogOptions{Previous: true}).DoRaw(ctx); err == nil {
		t.Fatal("logs --previous of a container never restarted: no error")
	}

	testAttach(t, ctx, cfg, cs)
	testPortForward(t, ctx, cfg, cs)

	// A finished container: terminated with its code, the pod Failed.
	if _, err := cs.CoreV1().Pods("default").Create(ctx, nodePod("exit3", "sh", "-c", "echo bye; exit 3"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod = waitPod(t, cs, "exit3", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := pod.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 3 {
		t.Fatalf("exit3: %+v", pod.Status.ContainerStatuses)
	}
	if logs, err := cs.CoreV1().Pods("default").GetLogs("exit3", &corev1.PodLogOptions{}).DoRaw(ctx); err != nil || string(logs) != "bye\n" {
		t.Fatalf("logs of exit3: %v %q", err, logs)
	}

	// Deleting the pod (with the default grace period) kills its processes
	// and the node removes the object.
	pid, _ := strconv.Atoi(strings.TrimPrefix(status.ContainerID, containerIDPrefix))
	if err := cs.CoreV1().Pods("default").Delete(ctx, "shell", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := cs.CoreV1().Pods("default").Get(ctx, "shell", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("pod shell still there: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process %d of the deleted pod: kill -0 gives %v", pid, err)
	}
}

// syncBuffer is written by the stream's goroutines and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testAttach: what is written to an attached stdin reaches the container,
// and what the container writes from then on comes back.
func testAttach(t *testing.T, ctx context.Context, cfg *rest.Config, cs kubernetes.Interface) {
	pod := nodePod("cat", "cat")
	pod.Spec.Containers[0].Stdin = true
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "cat", running)
	req := cs.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name("cat").SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: "main", Stdin: true, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	e, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		t.Fatal(err)
	}
	stdin, stdinW := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- e.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: &out, Stderr: io.Discard})
	}()
	if _, err := fmt.Fprintln(stdinW, "ping"); err != nil {
		t.Fatal(err)
	}
	for out.String() != "ping\n" {
		select {
		case err := <-done:
			t.Fatalf("attach ended early: %v, output %q", err, out.String())
		case <-ctx.Done():
			t.Fatalf("attach: no echo; output %q", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	stdinW.Close()
	if err := <-done; err != nil {
		t.Fatalf("attach: %v", err)
	}
}

// testPortForward forwards to a server the pod runs (this binary's
// serve-http), over SPDY and over the WebSocket tunnel.
func testPortForward(t *testing.T, ctx context.Context, cfg *rest.Config, cs kubernetes.Interface) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	pod := nodePod("web", self, "serve-http", "--port", strconv.Itoa(port), "--body", "pong")
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: asMainEnv, Value: "1"}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "web", running)
	// Forwarding needs the server to be listening: it says so in its log.
	for {
		logs, err := cs.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(logs, []byte("serving on")) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	u := cs.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name("web").SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tunnel, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dialers := map[string]httpstream.Dialer{
		"spdy":      spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", u),
		"websocket": tunnel,
	}
	for proto, dialer := range dialers {
		stop, ready := make(chan struct{}), make(chan struct{})
		pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, stop, ready, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- pf.ForwardPorts() }()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("%s port-forward: %v", proto, err)
		}
		ports, _ := pf.GetPorts()
		var body []byte
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", ports[0].Local))
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err != nil {
			t.Fatalf("%s port-forward: %v", proto, err)
		}
		close(stop)
		<-done
		if string(body) != "pong" {
			t.Fatalf("%s port-forward: got %q", proto, body)
		}
	}
}
