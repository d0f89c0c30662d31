package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

const stdinClosed = "stdin closed"

func startFlags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.stateDir, "state-dir", ".testenv", "directory for kubeconfig, logs, pid files, certificates and etcd data")
	fs.IntVar(&o.securePort, "secure-port", 0, "apiserver port on 127.0.0.1 (0 = pick a free one)")
	fs.DurationVar(&o.readyTimeout, "ready-timeout", 60*time.Second, "how long to wait for the apiserver's /readyz")
	fs.StringVar(&o.featureGates, "feature-gates", "AllAlpha=true,AllBeta=true", "kube-apiserver --feature-gates")
	fs.StringVar(&o.runtimeCfg, "runtime-config", "api/all=true", "kube-apiserver --runtime-config")
	fs.BoolVar(&o.watchCache, "watch-cache", true, "kube-apiserver --watch-cache")
	fs.BoolVar(&o.noNode, "no-node", false, "don't start the fake node "+nodeName+" (no exec, attach, port-forward or logs)")
	fs.Var((*multiFlag)(&o.extraArgs), "apiserver-arg", "extra kube-apiserver flag (repeatable), e.g. --apiserver-arg=--v=4")
	return o
}

func cmdStart(args []string) error {
	fs := flag.NewFlagSet("start", flag.ExitOnError)
	o := startFlags(fs)
	exitOnEOF := fs.Bool("exit-on-stdin-eof", false, "stop everything when stdin is closed (lets a parent's death stop the testenv)")
	detach := fs.Bool("detach", false, "run in the background; return once ready (used by `make apiserver`)")
	cleanup := fs.Bool("cleanup", false, "remove the state dir after a clean stop (temporary instances)")
	_ = fs.Parse(args)
	abs, err := filepath.Abs(o.stateDir)
	if err != nil {
		return err
	}
	o.stateDir = abs

	if *detach {
		return startDetached(o.stateDir, args)
	}

	lock, err := lockStateDir(o.stateDir)
	if err != nil {
		return err
	}
	defer lock.Close()
	_ = os.WriteFile(filepath.Join(o.stateDir, fileSupPid), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	defer os.Remove(filepath.Join(o.stateDir, fileSupPid))

	// Signals and stdin EOF are watched from the start so that a test binary
	// dying during our startup doesn't leave a half-started instance behind.
	quit := make(chan string, 4)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() { quit <- "signal " + (<-sig).String() }()
	if *exitOnEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			quit <- stdinClosed
		}()
	}

	s, err := newSupervisor(*o)
	if err != nil {
		return err
	}
	// The control listener is bound first so its address is known when the
	// env file is written.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	startErr := make(chan error, 1)
	go func() { startErr <- s.startAll() }()
	select {
	case err := <-startErr:
		if err != nil {
			return err
		}
	case why := <-quit:
		// startAll may hold the lock for up to --ready-timeout; don't wait
		// for it. Pdeathsig would kill the children when we exit anyway.
		for _, f := range []string{fileNodePid, fileAPIPid, fileEtcdPid} {
			killIfOurs(readPid(s.path(f)), syscall.SIGKILL)
		}
		return fmt.Errorf("aborted during startup: %s", why)
	}

	srv := &http.Server{Handler: s.controlMux(quit)}
	go func() { _ = srv.Serve(ln) }()
	if err := s.writeEnvFile(ln.Addr().String()); err != nil {
		s.shutdown(10 * time.Second)
		return err
	}
	nodeNote := ""
	if !o.noNode {
		nodeNote = fmt.Sprintf(", node %.2fs", s.nodeReady.Seconds())
	}
	fmt.Printf("kube-testenv: ready in %.2fs (etcd %.2fs%s): %s (%s), kubeconfig %s\n",
		time.Since(s.startedAt).Seconds(), s.etcdReady.Seconds(), nodeNote, s.serverURL, s.version, s.path(fileKubeconfig))

	var exitErr error
	grace := 10 * time.Second
	select {
	case why := <-quit:
		fmt.Fprintf(os.Stderr, "kube-testenv: stopping (%s)\n", why)
		if why == stdinClosed && *cleanup {
			grace = 0
		}
	case c := <-s.unexpected:
		exitErr = fmt.Errorf("%s exited unexpectedly (%v); last lines of %s:\n%s", c.name, c.err, c.logPath, tail(c.logPath, 15))
	}
	_ = srv.Close()
	s.shutdown(grace)
	if exitErr == nil && *cleanup {
		lock.Close()
		_ = os.RemoveAll(o.stateDir)
	}
	return exitErr
}

// controlMux is the plain-HTTP control API on loopback. It needs no auth:
// it only ever listens on 127.0.0.1 and the instance is disposable.
func (s *supervisor) controlMux(quit chan<- string) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, r *http.Request) {
		env, err := readEnv(s.opts.stateDir)
		reply(w, env, err)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("POST /restart-apiserver", func(w http.ResponseWriter, r *http.Request) {
		t := time.Now()
		err := s.restartAPIServer()
		reply(w, map[string]string{"restarted_in": time.Since(t).Round(time.Millisecond).String()}, err)
	})
	mux.HandleFunc("POST /compact", func(w http.ResponseWriter, r *http.Request) {
		rev, err := s.compact()
		reply(w, map[string]string{"revision": strconv.FormatInt(rev, 10)}, err)
	})
	mux.HandleFunc("POST /namespaces", func(w http.ResponseWriter, r *http.Request) {
		name, err := s.createNamespace(r.URL.Query().Get("name"), r.URL.Query().Get("generateName"))
		reply(w, map[string]string{"name": name}, err)
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, r *http.Request) {
		reply(w, map[string]string{"stopping": "true"}, nil)
		quit <- "stop requested"
	})
	return mux
}

func reply(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		v = map[string]string{"error": err.Error()}
	}
	_ = json.NewEncoder(w).Encode(v)
}

// compact compacts etcd to its current revision, so any watch or list with an
// older resourceVersion that reaches etcd gets 410 Gone.
func (s *supervisor) compact() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{fmt.Sprintf("http://127.0.0.1:%d", s.etcdClientPort)},
		DialTimeout: 5 * time.Second,
		Logger:      nil,
	})
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	ctx, cancel := ctxTimeout(10 * time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/registry/health-of-kube-testenv")
	if err != nil {
		return 0, err
	}
	rev := resp.Header.Revision
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return 0, err
	}
	return rev, nil
}

func (s *supervisor) createNamespace(name, generateName string) (string, error) {
	if name == "" && generateName == "" {
		return "", errors.New("need ?name= or ?generateName=")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.path(fileKubeconfig))
	if err != nil {
		return "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: generateName}}
	got, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return got.Name, nil
}

// startDetached re-executes `start` in a new session with output going to
// supervisor.log, and returns once it is ready or has failed.
func startDetached(stateDir string, args []string) error {
	lock, err := lockStateDir(stateDir)
	if err != nil {
		var inUse *inUseError
		if errors.As(err, &inUse) {
			if env, e := readEnv(stateDir); e == nil {
				fmt.Printf("kube-testenv: already running: %s (kubeconfig %s)\n", env["server"], env["kubeconfig"])
				return nil
			}
		}
		return err
	}
	// Stale files from a previous run must not be mistaken for readiness.
	_ = os.Remove(filepath.Join(stateDir, fileEnv))
	lock.Close()

	var childArgs []string
	for _, a := range args {
		if a != "--detach" && a != "-detach" {
			childArgs = append(childArgs, a)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(stateDir, fileSupLog)
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	devnull, _ := os.Open(os.DevNull)
	cmd := exec.Command(self, append([]string{"start"}, childArgs...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("supervisor failed (%v); %s says:\n%s", err, logPath, tail(logPath, 25))
		case <-time.After(100 * time.Millisecond):
		}
		if env, err := readEnv(stateDir); err == nil {
			fmt.Printf("kube-testenv: running %s (%s), pid %d\n  kubeconfig: %s\n  logs: %s/{apiserver,etcd,node,supervisor}.log\n",
				env["server"], env["version"], cmd.Process.Pid, env["kubeconfig"], stateDir)
			return nil
		}
	}
}
