//go:build !specsonly

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crilogs "k8s.io/cri-client/pkg/logs"
)

func testPod(containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1"},
		Spec:       corev1.PodSpec{NodeName: nodeName, Containers: containers},
	}
}

func readLogs(t *testing.T, c *containerRun, opts *corev1.PodLogOptions) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := crilogs.ReadLogs(context.Background(), c.logPath, c.id, criLogOptions(opts, time.Now()), containerState{c: c}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

// What a container writes comes back byte for byte through the kubelet's
// CRI log reader: a line longer than one record split into partial records
// and joined again, a last line without newline kept without one, stdout and
// stderr kept apart (their relative order is that of arrival, as with any
// runtime, so it is not checked).
func TestContainerLogRoundTrip(t *testing.T) {
	long := strings.Repeat("x", criLogLineMax*2+5)
	p, err := startPod(t.TempDir(), testPod(
		corev1.Container{
			Name: "c", Command: []string{"sh", "-c", `printf 'one\ntwo\n'; printf '%s\n' "$LONG"; printf 'tail'`},
			Env: []corev1.EnvVar{{Name: "LONG", Value: long}},
		},
		corev1.Container{Name: "streams", Command: []string{"sh", "-c", "echo err >&2; echo out"}},
	))
	if err != nil {
		t.Fatal(err)
	}
	c := p.containers[0]
	<-c.done
	<-p.containers[1].done
	if c.exitCode != 0 {
		t.Fatalf("exit code %d", c.exitCode)
	}
	stdout, stderr := readLogs(t, c, &corev1.PodLogOptions{})
	if want := "one\ntwo\n" + long + "\ntail"; stdout != want || stderr != "" {
		t.Fatalf("stdout: got %d bytes %q..., want %d bytes; stderr %q", len(stdout), stdout[:min(len(stdout), 40)], len(want), stderr)
	}
	if stdout, stderr := readLogs(t, p.containers[1], &corev1.PodLogOptions{}); stdout != "out\n" || stderr != "err\n" {
		t.Fatalf("streams: stdout %q, stderr %q", stdout, stderr)
	}
	tail := int64(1)
	if out, _ := readLogs(t, c, &corev1.PodLogOptions{TailLines: &tail}); out != "tail" {
		t.Fatalf("tailLines=1: %q", out)
	}
	limit := int64(6)
	if out, _ := readLogs(t, c, &corev1.PodLogOptions{LimitBytes: &limit}); out != "one\ntw" {
		t.Fatalf("limitBytes=6: %q", out)
	}
	raw, _ := os.ReadFile(c.logPath)
	first := strings.SplitN(string(raw), "\n", 2)[0]
	if _, err := time.Parse(time.RFC3339Nano, strings.Fields(first)[0]); err != nil || !strings.HasSuffix(first, " stdout F one") {
		t.Fatalf("first CRI record %q (%v)", first, err)
	}
}

// A container's status follows its process: running, then terminated with
// the exit code; the pod ends Failed when a container failed, and the
// process group is killed on termination.
func TestPodStatusAndTermination(t *testing.T) {
	pod := testPod(
		corev1.Container{Name: "fails", Command: []string{"sh", "-c", "exit 7"}},
		corev1.Container{Name: "sleeps"}, // no command: sleeps
	)
	p, err := startPod(t.TempDir(), pod)
	if err != nil {
		t.Fatal(err)
	}
	<-p.containers[0].done
	st := podStatus(pod, p)
	if st.Phase != corev1.PodRunning || st.PodIP != "127.0.0.1" {
		t.Fatalf("one running: %+v", st)
	}
	if term := st.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 7 || term.Reason != "Error" {
		t.Fatalf("fails: %+v", st.ContainerStatuses[0])
	}
	if cs := st.ContainerStatuses[1]; cs.State.Running == nil || !cs.Ready || cs.ContainerID != p.containers[1].id {
		t.Fatalf("sleeps: %+v", cs)
	}
	p.terminate(time.Second)
	st = podStatus(pod, p)
	if st.Phase != corev1.PodFailed || st.ContainerStatuses[1].State.Terminated.ExitCode != 128+15 {
		t.Fatalf("after terminate: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "sleeps", "0.log")); err != nil {
		t.Fatal(err)
	}
}
