//go:build !specsonly

package main

// The fake node's kubelet API: the paths the apiserver calls for pods/exec,
// pods/attach, pods/portforward and pods/log. Exec, attach and port-forward
// follow the kubelet's server (pkg/kubelet/server): ask the CRI streaming
// server for a one-time URL and proxy the upgrade request to it. Logs are
// read from the CRI-format files with the kubelet's reader
// (k8s.io/cri-client/pkg/logs).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/util/flushwriter"
	criapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crilogs "k8s.io/cri-client/pkg/logs"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // PodLogOptions query conversions in legacyscheme
	"k8s.io/kubernetes/pkg/apis/core/v1/validation"
)

func (a *nodeAgent) kubeletMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	for _, method := range []string{"GET", "POST"} {
		for _, p := range []string{"/exec/{ns}/{pod}/{container}", "/exec/{ns}/{pod}/{uid}/{container}"} {
			mux.HandleFunc(method+" "+p, a.serveExec)
		}
		for _, p := range []string{"/attach/{ns}/{pod}/{container}", "/attach/{ns}/{pod}/{uid}/{container}"} {
			mux.HandleFunc(method+" "+p, a.serveAttach)
		}
		for _, p := range []string{"/portForward/{ns}/{pod}", "/portForward/{ns}/{pod}/{uid}"} {
			mux.HandleFunc(method+" "+p, a.servePortForward)
		}
	}
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", a.serveContainerLogs)
	return mux
}

// lookup finds the pod (checking the UID when the path has one) and, unless
// container is "", the container.
func (a *nodeAgent) lookup(w http.ResponseWriter, r *http.Request, container string) (*podRun, *containerRun, bool) {
	p := a.rt.podByName(r.PathValue("ns"), r.PathValue("pod"))
	if p == nil || (r.PathValue("uid") != "" && string(p.uid) != r.PathValue("uid")) {
		http.Error(w, "pod does not exist", http.StatusNotFound)
		return nil, nil, false
	}
	if container == "" {
		return p, nil, true
	}
	c := p.container(container)
	if c == nil {
		http.Error(w, fmt.Sprintf("container %q not found in pod %q", container, p.name), http.StatusNotFound)
		return nil, nil, false
	}
	return p, c, true
}

func (a *nodeAgent) serveExec(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommandserver.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, c, ok := a.lookup(w, r, r.PathValue("container"))
	if !ok {
		return
	}
	resp, err := a.streams.GetExec(&runtimeapi.ExecRequest{
		ContainerId: c.id, Cmd: r.URL.Query()[corev1.ExecCommandParam],
		Tty: opts.TTY, Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr,
	})
	if err != nil {
		_ = streaming.WriteError(err, w)
		return
	}
	a.proxyToStreams(w, r, resp.Url)
}

func (a *nodeAgent) serveAttach(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommandserver.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, c, ok := a.lookup(w, r, r.PathValue("container"))
	if !ok {
		return
	}
	resp, err := a.streams.GetAttach(&runtimeapi.AttachRequest{
		ContainerId: c.id, Tty: opts.TTY, Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr,
	})
	if err != nil {
		_ = streaming.WriteError(err, w)
		return
	}
	a.proxyToStreams(w, r, resp.Url)
}

func (a *nodeAgent) servePortForward(w http.ResponseWriter, r *http.Request) {
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p, _, ok := a.lookup(w, r, "")
	if !ok {
		return
	}
	req := &runtimeapi.PortForwardRequest{PodSandboxId: string(p.uid)}
	for _, port := range opts.Ports {
		req.Port = append(req.Port, int32(port))
	}
	resp, err := a.streams.GetPortForward(req)
	if err != nil {
		_ = streaming.WriteError(err, w)
		return
	}
	a.proxyToStreams(w, r, resp.Url)
}

// proxyToStreams is the kubelet's proxyStream: the upgrade request goes on
// to the streaming server's one-time URL.
func (a *nodeAgent) proxyToStreams(w http.ResponseWriter, r *http.Request, raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	proxy.NewUpgradeAwareHandler(u, nil, false, true, proxyResponder{}).ServeHTTP(w, r)
}

type proxyResponder struct{}

func (proxyResponder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// serveContainerLogs is the kubelet's getContainerLogs over the container's
// CRI log file: the same query parameters (follow, tailLines, sinceSeconds,
// sinceTime, timestamps, limitBytes, stream, previous) with the same reader.
func (a *nodeAgent) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	// The kubelet still accepts the old "tail" parameter.
	if tail := query.Get("tail"); tail != "" {
		query["tailLines"] = []string{tail}
		if tail == "all" {
			delete(query, "tailLines")
		}
	}
	opts := &corev1.PodLogOptions{}
	if err := legacyscheme.ParameterCodec.DecodeParameters(query, corev1.SchemeGroupVersion, opts); err != nil {
		http.Error(w, `{"message": "Unable to decode query."}`, http.StatusBadRequest)
		return
	}
	if errs := validation.ValidatePodLogOptions(opts); len(errs) > 0 {
		http.Error(w, errs.ToAggregate().Error(), http.StatusUnprocessableEntity)
		return
	}
	p, c, ok := a.lookup(w, r, r.PathValue("container"))
	if !ok {
		return
	}
	if opts.Previous {
		// Containers are never restarted, so there is no previous instance.
		http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", c.spec.Name, p.name), http.StatusBadRequest)
		return
	}
	fw := flushwriter.Wrap(w)
	stdout, stderr := fw, fw
	if opts.Stream != nil {
		switch *opts.Stream {
		case corev1.LogStreamStdout:
			stderr = io.Discard
		case corev1.LogStreamStderr:
			stdout = io.Discard
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Transfer-Encoding", "chunked")
	err := crilogs.ReadLogs(r.Context(), c.logPath, c.id, criLogOptions(opts, time.Now()),
		containerState{c: c}, stdout, stderr)
	if err != nil && r.Context().Err() == nil {
		fmt.Fprintf(fw, "kube-testenv node: reading logs: %v\n", err)
	}
}

// containerState answers the one RuntimeService question the log reader asks
// while following: is the container still running?
// The embedded interface is nil: any other method would panic, and the
// reader calls none.
type containerState struct {
	criapi.RuntimeService
	c *containerRun
}

func (s containerState) ContainerStatus(context.Context, string, bool) (*runtimeapi.ContainerStatusResponse, error) {
	state := runtimeapi.ContainerState_CONTAINER_EXITED
	if s.c.running() {
		state = runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: s.c.id, State: state}}, nil
}

// criLogOptions is the kubelet's conversion of a pod's log options
// (pkg/kubelet/kuberuntime ReadLogs): since-seconds and since-time both
// bound the start, the later one wins.
func criLogOptions(opts *corev1.PodLogOptions, now time.Time) *crilogs.LogOptions {
	out := &crilogs.LogOptions{
		TailLines:  opts.TailLines,
		LimitBytes: opts.LimitBytes,
		Follow:     opts.Follow,
		Timestamp:  opts.Timestamps,
	}
	if opts.SinceSeconds != nil {
		out.Since = now.Add(-time.Duration(*opts.SinceSeconds) * time.Second)
	}
	if opts.SinceTime != nil && opts.SinceTime.After(out.Since) {
		out.Since = opts.SinceTime.Time
	}
	return out
}
