//go:build !specsonly

package main

// The fake node's container runtime: every container of a pod bound to the
// node is a local process group. It implements the upstream streaming
// server's Runtime interface (k8s.io/cri-streaming/pkg/streaming), so exec,
// attach and port-forward are served by the kubelet's own protocol code.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// containerIDPrefix is the runtime name in containerStatuses[].containerID.
const containerIDPrefix = "testenv://"

// criLogLineMax is where long lines are split into partial ("P") CRI log
// records, as container runtimes do.
const criLogLineMax = 16 * 1024

// containerRun is one container process.
type containerRun struct {
	pod     *podRun
	spec    corev1.Container
	id      string // testenv://<pid>
	cmd     *exec.Cmd
	logPath string
	started time.Time

	stdin io.WriteCloser // nil unless spec.stdin
	tty   *os.File       // pty master when spec.tty

	logMu sync.Mutex // one CRI record at a time in the log file
	log   *os.File

	subMu sync.Mutex
	subs  map[*outputSub]struct{} // attached clients

	done     chan struct{} // closed once the process is reaped and its output drained
	exitCode int32
	finished time.Time
}

// outputSub receives a container's output from the moment of attaching.
type outputSub struct {
	stdout, stderr io.Writer
	failed         chan struct{} // closed on the first failed write
	once           sync.Once
}

// podRun is one pod's processes and working directory.
type podRun struct {
	uid        types.UID
	namespace  string
	name       string
	dir        string // <node state>/pods/<ns>_<name>_<uid>
	workDir    string
	containers []*containerRun
	startedAt  time.Time

	killOnce sync.Once
}

func (p *podRun) container(name string) *containerRun {
	for _, c := range p.containers {
		if c.spec.Name == name {
			return c
		}
	}
	return nil
}

// processEnv is what a container and an exec in it see: the node's PATH
// (there is no image), HOME in the pod's working dir, the pod name as
// HOSTNAME, then the container's literal env values.
func (p *podRun) processEnv(spec corev1.Container) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.workDir, "HOSTNAME=" + p.name}
	for _, e := range spec.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env
}

// startPod starts every container of pod; a container that cannot start is
// recorded as terminated with exit code 128 and the error in its log.
func startPod(nodeDir string, pod *corev1.Pod) (*podRun, error) {
	p := &podRun{
		uid: pod.UID, namespace: pod.Namespace, name: pod.Name,
		dir:       filepath.Join(nodeDir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID)),
		startedAt: time.Now(),
	}
	p.workDir = filepath.Join(p.dir, "root")
	if err := os.MkdirAll(p.workDir, 0o755); err != nil {
		return nil, err
	}
	for _, spec := range pod.Spec.Containers {
		p.containers = append(p.containers, p.startContainer(spec))
	}
	return p, nil
}

func (p *podRun) startContainer(spec corev1.Container) *containerRun {
	c := &containerRun{pod: p, spec: spec, subs: map[*outputSub]struct{}{}, done: make(chan struct{}), started: time.Now()}
	// The kubelet's layout: <pod dir>/<container>/<restart count>.log
	c.logPath = filepath.Join(p.dir, spec.Name, "0.log")
	err := c.start()
	if err != nil {
		c.exitCode, c.finished = 128, time.Now()
		if c.log != nil {
			c.writeRecord("stderr", []byte("kube-testenv node: "+err.Error()+"\n"))
			c.log.Close()
		}
		close(c.done)
	}
	return c
}

func (c *containerRun) start() error {
	if err := os.MkdirAll(filepath.Dir(c.logPath), 0o755); err != nil {
		return err
	}
	var err error
	if c.log, err = os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return err
	}
	argv := append(append([]string{}, c.spec.Command...), c.spec.Args...)
	if len(c.spec.Command) == 0 {
		// No image means no entrypoint: keep the container alive instead.
		argv = []string{"sleep", "infinity"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = c.pod.workDir, c.pod.processEnv(c.spec)
	// Own process group, so deleting the pod kills what the container
	// started too; Pdeathsig so no container outlives a killed node.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var outputs []struct {
		stream string
		r      io.Reader
	}
	if c.spec.TTY {
		// pty.Start makes the process a session leader with the pty as its
		// controlling terminal (which also gives it its own process group).
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if c.tty, err = pty.Start(cmd); err != nil {
			return fmt.Errorf("starting %q: %w", argv[0], err)
		}
		if c.spec.Stdin {
			c.stdin = c.tty
		}
		outputs = append(outputs, struct {
			stream string
			r      io.Reader
		}{"stdout", c.tty})
	} else {
		if c.spec.Stdin {
			if c.stdin, err = cmd.StdinPipe(); err != nil {
				return err
			}
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting %q: %w", argv[0], err)
		}
		outputs = append(outputs, struct {
			stream string
			r      io.Reader
		}{"stdout", stdout}, struct {
			stream string
			r      io.Reader
		}{"stderr", stderr})
	}
	c.cmd = cmd
	c.id = containerIDPrefix + strconv.Itoa(cmd.Process.Pid)
	var pumps sync.WaitGroup
	for _, o := range outputs {
		pumps.Add(1)
		go func() {
			defer pumps.Done()
			c.pump(o.stream, o.r)
		}()
	}
	go func() {
		// Output first: the container counts as running (for log follow)
		// until everything it wrote is in the log file. With a pty the
		// master only reports EOF/EIO once the process has gone.
		pumps.Wait()
		err := cmd.Wait()
		c.exitCode = exitCodeOf(cmd.ProcessState, err)
		c.finished = time.Now()
		if c.tty != nil {
			c.tty.Close()
		}
		c.log.Close()
		close(c.done)
	}()
	return nil
}

// exitCodeOf reports a signal death as 128+signal, as container runtimes do.
func exitCodeOf(st *os.ProcessState, err error) int32 {
	if st == nil {
		return 128
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(st.ExitCode())
}

// pump copies one output stream into CRI-format log records and to every
// attached client.
func (c *containerRun) pump(stream string, r io.Reader) {
	br := bufio.NewReaderSize(r, criLogLineMax)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			c.writeRecord(stream, line)
			c.broadcast(stream, line)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// writeRecord appends one CRI log record: "<RFC3339Nano> <stream> F|P <text>".
// A chunk without its newline (a long line or the end of the output) is a
// partial record, so readers join it with what follows.
func (c *containerRun) writeRecord(stream string, chunk []byte) {
	tag, text := "P", chunk
	if n := len(chunk); n > 0 && chunk[n-1] == '\n' {
		tag, text = "F", chunk[:n-1]
	}
	rec := make([]byte, 0, len(text)+64)
	rec = time.Now().UTC().AppendFormat(rec, time.RFC3339Nano)
	rec = append(rec, ' ')
	rec = append(rec, stream...)
	rec = append(rec, ' ')
	rec = append(rec, tag...)
	rec = append(rec, ' ')
	rec = append(rec, text...)
	rec = append(rec, '\n')
	c.logMu.Lock()
	_, _ = c.log.Write(rec)
	c.logMu.Unlock()
}

func (c *containerRun) broadcast(stream string, chunk []byte) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	for s := range c.subs {
		w := s.stdout
		if stream == "stderr" {
			w = s.stderr
		}
		if w == nil {
			continue
		}
		if _, err := w.Write(chunk); err != nil {
			s.once.Do(func() { close(s.failed) })
			delete(c.subs, s)
		}
	}
}

func (c *containerRun) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// kill sends sig to the container's process group.
func (c *containerRun) kill(sig syscall.Signal) {
	if c.cmd != nil && c.cmd.Process != nil && c.running() {
		_ = syscall.Kill(-c.cmd.Process.Pid, sig)
	}
}

// terminate stops every container: SIGTERM, SIGKILL after grace.
func (p *podRun) terminate(grace time.Duration) {
	p.killOnce.Do(func() {
		for _, c := range p.containers {
			c.kill(syscall.SIGTERM)
		}
		deadline := time.After(grace)
		for _, c := range p.containers {
			select {
			case <-c.done:
			case <-deadline:
			}
		}
		for _, c := range p.containers {
			c.kill(syscall.SIGKILL)
			<-c.done
		}
	})
}

// nodeRuntime finds containers by ID for the streaming server.
type nodeRuntime struct {
	mu   sync.Mutex
	pods map[types.UID]*podRun
}

func (r *nodeRuntime) containerByID(id string) (*containerRun, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pods {
		for _, c := range p.containers {
			if c.id == id {
				return c, nil
			}
		}
	}
	return nil, fmt.Errorf("container %q not found", id)
}

func (r *nodeRuntime) podByName(namespace, name string) *podRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pods {
		if p.namespace == namespace && p.name == name {
			return p
		}
	}
	return nil
}

// Exec runs cmd as a new process in the container's working dir and
// environment, with a pty when tty is set.
func (r *nodeRuntime) Exec(ctx context.Context, containerID string, argv []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	c, err := r.containerByID(containerID)
	if err != nil {
		return err
	}
	if !c.running() {
		return fmt.Errorf("container %q is not running", c.spec.Name)
	}
	if len(argv) == 0 {
		return errors.New("no command given")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = c.pod.workDir, c.pod.processEnv(c.spec)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if tty {
		f, err := pty.Start(cmd)
		if err != nil {
			return err
		}
		defer f.Close()
		if resize != nil {
			go applyResizes(f, resize)
		}
		if in != nil {
			go func() { _, _ = io.Copy(f, in) }()
		}
		var copied sync.WaitGroup
		if out != nil {
			copied.Add(1)
			go func() {
				defer copied.Done()
				_, _ = io.Copy(out, f) // ends with EIO once the process is gone
			}()
		}
		err = cmd.Wait()
		copied.Wait()
		return execResult(cmd, err)
	}
	if in != nil {
		// Our own copy: os/exec would make Wait block until the client
		// closes its stdin, even after the process has exited.
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		go func() {
			_, _ = io.Copy(stdin, in)
			stdin.Close()
		}()
	}
	if out != nil {
		cmd.Stdout = out
	}
	if errOut != nil {
		cmd.Stderr = errOut
	}
	return execResult(cmd, cmd.Run())
}

// execResult turns a non-zero exit into the error type the upstream exec
// handler reports as NonZeroExitCode with the code.
func execResult(cmd *exec.Cmd, err error) error {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return utilexec.CodeExitError{Err: err, Code: int(exitCodeOf(cmd.ProcessState, err))}
	}
	return err
}

func applyResizes(f *os.File, resize <-chan remotecommand.TerminalSize) {
	for size := range resize {
		_ = pty.Setsize(f, &pty.Winsize{Rows: size.Height, Cols: size.Width})
	}
}

// Attach streams the container's output from now on to out/errOut and in to
// its stdin (when the container has one). It ends when the container exits,
// the client goes away (a write fails or the request ends) or, with stdin
// requested, when the client's stdin ends.
func (r *nodeRuntime) Attach(ctx context.Context, containerID string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	c, err := r.containerByID(containerID)
	if err != nil {
		return err
	}
	if !c.running() {
		return fmt.Errorf("container %q is not running", c.spec.Name)
	}
	if c.tty != nil && resize != nil {
		go applyResizes(c.tty, resize)
	}
	sub := &outputSub{failed: make(chan struct{})}
	if out != nil {
		sub.stdout = out
	}
	if errOut != nil {
		sub.stderr = errOut
	}
	c.subMu.Lock()
	c.subs[sub] = struct{}{}
	c.subMu.Unlock()
	defer func() {
		c.subMu.Lock()
		delete(c.subs, sub)
		c.subMu.Unlock()
	}()
	stdinDone := make(chan struct{})
	if in != nil && c.stdin != nil {
		go func() {
			defer close(stdinDone)
			_, _ = io.Copy(c.stdin, in)
			if c.spec.StdinOnce && c.tty == nil {
				c.stdin.Close()
			}
		}()
	} else {
		stdinDone = nil // never ready: only output matters
	}
	select {
	case <-c.done:
	case <-ctx.Done():
	case <-sub.failed:
	case <-stdinDone:
	}
	return nil
}

// PortForward connects the stream to 127.0.0.1:port: pods share the host's
// loopback.
func (r *nodeRuntime) PortForward(ctx context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		return fmt.Errorf("pod %s: connecting to port %d: %w", podSandboxID, port, err)
	}
	defer conn.Close()
	go func() {
		_, _ = io.Copy(conn, stream)
		_ = conn.(*net.TCPConn).CloseWrite()
	}()
	_, err = io.Copy(stream, conn)
	return err
}
