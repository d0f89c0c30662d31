package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"k8s.io/client-go/tools/clientcmd"
)

// State-dir layout (documented in testenv/README.md).
const (
	fileLock       = "lock"
	fileEnv        = "testenv.env"
	fileControl    = "control"
	fileKubeconfig = "kubeconfig"
	fileSupPid     = "supervisor.pid"
	fileEtcdPid    = "etcd.pid"
	fileAPIPid     = "apiserver.pid"
	fileNodePid    = "node.pid"
	fileNodeLog    = "node.log"
	dirNode        = "node"
	fileEtcdLog    = "etcd.log"
	fileAPILog     = "apiserver.log"
	fileSupLog     = "supervisor.log"
	dirEtcd        = "etcd"
	dirPKI         = "pki"
)

type options struct {
	stateDir     string
	securePort   int
	readyTimeout time.Duration
	featureGates string
	runtimeCfg   string
	watchCache   bool
	extraArgs    []string
	noNode       bool
}

// child is one supervised process; done is closed when it has exited.
type child struct {
	name    string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	logPath string
	pidPath string
}

type supervisor struct {
	opts           options
	self           string
	pki            *pki
	etcdClientPort int
	etcdPeerPort   int
	securePort     int
	nodePort       int
	serverURL      string
	version        string
	httpc          *http.Client

	mu        sync.Mutex // guards the fields below; held while (re)starting
	restartMu sync.Mutex // one restart at a time, across its unlocked window
	etcd      *child
	api       *child
	node      *child
	stopping  bool
	// unexpected receives a child that exited while nobody asked it to.
	unexpected chan *child
	startedAt  time.Time
	etcdReady  time.Duration // since startedAt, for the "ready" line
	nodeReady  time.Duration // time the node took to register, for the "ready" line
}

func newSupervisor(o options) (*supervisor, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return &supervisor{opts: o, self: self, unexpected: make(chan *child, 3)}, nil
}

func (s *supervisor) path(name string) string { return filepath.Join(s.opts.stateDir, name) }

// prepare wipes the previous instance's files (the caller holds the lock)
// and generates credentials and ports.
func (s *supervisor) prepare() error {
	s.startedAt = time.Now()
	for _, f := range []string{fileEnv, fileControl, fileKubeconfig, fileEtcdPid, fileAPIPid, fileNodePid, fileEtcdLog, fileAPILog, fileNodeLog, dirEtcd, dirPKI, dirNode} {
		if err := os.RemoveAll(s.path(f)); err != nil {
			return err
		}
	}
	var err error
	if s.pki, err = newPKI(s.path(dirPKI)); err != nil {
		return fmt.Errorf("generating certificates: %w", err)
	}
	if s.opts.securePort != 0 {
		// Fail early with a clear message instead of a buried bind error.
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", s.opts.securePort))
		if err != nil {
			return fmt.Errorf("port %d on 127.0.0.1 is not available for the apiserver: %w", s.opts.securePort, err)
		}
		l.Close()
		s.securePort = s.opts.securePort
	} else if s.securePort, err = freePort(); err != nil {
		return err
	}
	if s.etcdClientPort, err = freePort(); err != nil {
		return err
	}
	if s.etcdPeerPort, err = freePort(); err != nil {
		return err
	}
	if s.nodePort, err = freePort(); err != nil {
		return err
	}
	s.serverURL = fmt.Sprintf("https://127.0.0.1:%d", s.securePort)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.pki.caPEM)
	s.httpc = &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true},
	}
	return nil
}

// freePort asks the kernel for an unused loopback port. Another process could
// grab it before the child binds; the child then fails and says so in its log.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *supervisor) spawn(name, logName, pidName string, args []string) (*child, error) {
	logPath := s.path(logName)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "\n=== kube-testenv: starting %s at %s\n", name, time.Now().Format(time.RFC3339))
	cmd := exec.Command(s.self, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig: if the supervisor dies, even by SIGKILL, the kernel kills
	// the children, so no etcd/apiserver is ever orphaned.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{}), logPath: logPath, pidPath: s.path(pidName)}
	_ = os.WriteFile(c.pidPath, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	go func() {
		c.err = cmd.Wait()
		close(c.done)
		s.mu.Lock()
		expected := s.stopping || (c != s.api && c != s.etcd && c != s.node)
		s.mu.Unlock()
		if !expected {
			s.unexpected <- c
		}
	}()
	return c, nil
}

// stopChild terminates gracefully, then forcefully; never leaves it running.
func stopChild(c *child, grace time.Duration) {
	if c == nil {
		return
	}
	select {
	case <-c.done:
		return
	default:
	}
	if grace <= 0 {
		_ = c.cmd.Process.Kill()
	} else {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	_ = os.Remove(c.pidPath)
}

// waitFor polls check until it succeeds, the child exits or timeout passes;
// every failure message names the log to read.
func waitFor(c *child, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		select {
		case <-c.done:
			return fmt.Errorf("%s exited during startup (%v); last lines of %s:\n%s", c.name, c.err, c.logPath, tail(c.logPath, 15))
		default:
		}
		if last = check(); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s (last check: %v); see %s; last lines:\n%s", c.name, timeout, last, c.logPath, tail(c.logPath, 15))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

func (s *supervisor) startEtcd() error {
	c, err := s.spawn("etcd", fileEtcdLog, fileEtcdPid, []string{"etcd",
		"--data-dir", s.path(dirEtcd),
		"--client-port", strconv.Itoa(s.etcdClientPort),
		"--peer-port", strconv.Itoa(s.etcdPeerPort)})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.etcd = c
	s.mu.Unlock()
	hc := &http.Client{Timeout: 2 * time.Second}
	return waitFor(c, 30*time.Second, func() error {
		resp, err := hc.Get(fmt.Sprintf("http://127.0.0.1:%d/health", s.etcdClientPort))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("etcd /health: %s", resp.Status)
		}
		return nil
	})
}

func (s *supervisor) apiserverArgs() []string {
	p := s.pki
	args := []string{"apiserver",
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", s.etcdClientPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// Since 1.37 the endpoint reconcilers refuse a loopback address for
		// the default/kubernetes Endpoints; nothing in a testenv reaches the
		// apiserver through that Service, so it gets no Endpoints.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(s.securePort),
		"--tls-cert-file=" + p.servingCert,
		"--tls-private-key-file=" + p.servingKey,
		"--client-ca-file=" + p.caCert,
		"--cert-dir=" + p.dir,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		"--token-auth-file=" + p.tokenFile,
		"--service-account-key-file=" + p.saPub,
		"--service-account-signing-key-file=" + p.saKey,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--runtime-config=" + s.opts.runtimeCfg,
		"--feature-gates=" + s.opts.featureGates,
		"--allow-privileged=true",
		// Without kube-controller-manager nothing creates the "default"
		// ServiceAccount, so the ServiceAccount admission plugin would reject
		// every pod.
		"--disable-admission-plugins=ServiceAccount",
		// How the apiserver reaches the node's kubelet API (exec, attach,
		// port-forward, logs): its address and port from the Node object,
		// the node's certificate checked against the testenv CA, and a
		// client certificate of its own.
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-certificate-authority=" + p.caCert,
		"--kubelet-client-certificate=" + p.kubeletClientCert,
		"--kubelet-client-key=" + p.kubeletClientKey,
		"--watch-cache=" + strconv.FormatBool(s.opts.watchCache),
		"--profiling=false",
		"--v=1",
	}
	return append(args, s.opts.extraArgs...)
}

func (s *supervisor) startAPIServer() error {
	c, err := s.spawn("kube-apiserver", fileAPILog, fileAPIPid, s.apiserverArgs())
	if err != nil {
		return err
	}
	s.api = c
	return waitFor(c, s.opts.readyTimeout, func() error {
		code, body, err := s.get("/readyz")
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("/readyz: %d %s", code, firstLine(body))
		}
		return nil
	})
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func (s *supervisor) get(path string) (int, []byte, error) {
	req, _ := http.NewRequest("GET", s.serverURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.pki.adminToken)
	resp, err := s.httpc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// startAll brings up etcd and the apiserver and records the served version.
func (s *supervisor) startAll() error {
	if err := s.prepare(); err != nil {
		return err
	}
	if err := s.startEtcd(); err != nil {
		s.shutdown(10 * time.Second)
		return err
	}
	s.etcdReady = time.Since(s.startedAt)
	s.mu.Lock()
	err := s.startAPIServer()
	s.mu.Unlock()
	if err != nil {
		s.shutdown(10 * time.Second)
		return err
	}
	_, body, err := s.get("/version")
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err == nil {
		err = json.Unmarshal(body, &v)
	}
	if err != nil {
		s.shutdown(10 * time.Second)
		return fmt.Errorf("reading /version: %w", err)
	}
	s.version = v.GitVersion
	if strings.HasPrefix(s.version, "v0.0.0") {
		fmt.Fprintf(os.Stderr, "kube-testenv: warning: apiserver reports %s; build with `make testenv-build` to stamp the real version\n", s.version)
	}
	if err := s.writeClientFiles(); err != nil {
		s.shutdown(10 * time.Second)
		return err
	}
	if s.opts.noNode {
		return nil
	}
	t := time.Now()
	if err := s.startNode(); err != nil {
		s.shutdown(10 * time.Second)
		return err
	}
	s.nodeReady = time.Since(t)
	return nil
}

// startNode starts the fake node (`kube-testenv node`, node.go) with the
// admin kubeconfig and waits until its Node object reports Ready, which it
// posts once its kubelet API is listening.
func (s *supervisor) startNode() error {
	c, err := s.spawn("node", fileNodeLog, fileNodePid, []string{"node",
		"--kubeconfig", s.path(fileKubeconfig),
		"--state-dir", s.path(dirNode),
		"--port", strconv.Itoa(s.nodePort),
		"--tls-cert-file", s.pki.nodeCert,
		"--tls-private-key-file", s.pki.nodeKey,
		"--client-ca-file", s.pki.caCert,
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.node = c
	s.mu.Unlock()
	return waitFor(c, 30*time.Second, func() error {
		code, body, err := s.get("/api/v1/nodes/" + nodeName)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("GET node %s: %d %s", nodeName, code, firstLine(body))
		}
		var n struct {
			Status struct {
				Conditions []struct{ Type, Status string }
			}
		}
		if err := json.Unmarshal(body, &n); err != nil {
			return err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == "Ready" && cond.Status == "True" {
				return nil
			}
		}
		return fmt.Errorf("node %s not Ready yet", nodeName)
	})
}

func (s *supervisor) restartAPIServer() error {
	s.restartMu.Lock()
	defer s.restartMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return errors.New("supervisor is stopping")
	}
	old := s.api
	s.api = nil // marks old's exit as expected
	s.mu.Unlock()
	stopChild(old, 10*time.Second)
	s.mu.Lock()
	return s.startAPIServer()
}

// shutdown stops the apiserver before etcd so it doesn't spend its grace
// period retrying a vanished storage backend.
// A zero grace kills at once: used when the owner (a test binary) is gone and
// the data is about to be deleted anyway.
func (s *supervisor) shutdown(grace time.Duration) {
	s.mu.Lock()
	s.stopping = true
	api, etcd, node := s.api, s.etcd, s.node
	s.mu.Unlock()
	// The node first, always with SIGTERM: it kills its containers' process
	// groups on the way out (SIGKILL would leave their children behind).
	stopChild(node, max(grace, 5*time.Second))
	stopChild(api, grace)
	stopChild(etcd, grace)
	_ = os.Remove(s.path(fileEnv))
	_ = os.Remove(s.path(fileControl))
}

// writeClientFiles writes the kubeconfig and the key=value env file that the
// Rust test support reads (it has no YAML parser).
func (s *supervisor) writeClientFiles() error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testenv"] = &clientcmdapi.Cluster{Server: s.serverURL, CertificateAuthorityData: s.pki.caPEM}
	cfg.AuthInfos[adminUser] = &clientcmdapi.AuthInfo{Token: s.pki.adminToken}
	cfg.AuthInfos[unprivUser] = &clientcmdapi.AuthInfo{Token: s.pki.unprivToken}
	cfg.Contexts["admin"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: adminUser, Namespace: "default"}
	cfg.Contexts["unprivileged"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: unprivUser, Namespace: "default"}
	cfg.CurrentContext = "admin"
	if err := clientcmd.WriteToFile(*cfg, s.path(fileKubeconfig)); err != nil {
		return err
	}
	return nil
}

func (s *supervisor) writeEnvFile(controlAddr string) error {
	env := []string{
		"server=" + s.serverURL,
		"version=" + s.version,
		"control=" + controlAddr,
		"kubeconfig=" + s.path(fileKubeconfig),
		"ca_file=" + s.pki.caCert,
		"admin_user=" + adminUser,
		"admin_token=" + s.pki.adminToken,
		"unprivileged_user=" + unprivUser,
		"unprivileged_token=" + s.pki.unprivToken,
		"supervisor_pid=" + strconv.Itoa(os.Getpid()),
		"apiserver_log=" + s.path(fileAPILog),
		"etcd_log=" + s.path(fileEtcdLog),
	}
	if !s.opts.noNode {
		env = append(env, "node_name="+nodeName, "node_port="+strconv.Itoa(s.nodePort), "node_log="+s.path(fileNodeLog))
	}
	// Written last and renamed into place: its presence means "ready".
	if err := writeAtomic(s.path(fileControl), []byte(controlAddr+"\n")); err != nil {
		return err
	}
	return writeAtomic(s.path(fileEnv), []byte(strings.Join(env, "\n")+"\n"))
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readEnv parses a state dir's testenv.env.
func readEnv(stateDir string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(stateDir, fileEnv))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			m[k] = v
		}
	}
	return m, sc.Err()
}

// lockStateDir takes an exclusive, non-blocking flock so two supervisors
// never share one etcd data dir. The fd is close-on-exec, so children don't
// keep the lock alive.
func lockStateDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, fileLock), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		pid, _ := os.ReadFile(filepath.Join(dir, fileSupPid))
		return nil, &inUseError{dir: dir, pid: strings.TrimSpace(string(pid))}
	}
	return f, nil
}

type inUseError struct{ dir, pid string }

func (e *inUseError) Error() string {
	return fmt.Sprintf("state dir %s (and its etcd data) is locked by a running kube-testenv (pid %s); stop it with `kube-testenv ctl stop --state-dir %s` (or `make apiserver-stop`)", e.dir, e.pid, e.dir)
}

func ctxTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
