package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const ctlUsage = "usage: kube-testenv ctl [--state-dir DIR] restart|compact|stop|namespace NAME|status|wait"

func cmdCtl(args []string) error {
	fs := flag.NewFlagSet("ctl", flag.ExitOnError)
	stateDir := fs.String("state-dir", ".testenv", "state dir of the running testenv")
	timeout := fs.Duration("timeout", 90*time.Second, "for wait/stop: how long to wait")
	_ = fs.Parse(args)
	rest := fs.Args()
	if len(rest) == 0 {
		return errors.New(ctlUsage)
	}
	dir, _ := filepath.Abs(*stateDir)
	switch rest[0] {
	case "restart":
		return ctlPrint(dir, "/restart-apiserver")
	case "compact":
		return ctlPrint(dir, "/compact")
	case "namespace":
		if len(rest) != 2 {
			return errors.New(ctlUsage)
		}
		return ctlPrint(dir, "/namespaces?name="+url.QueryEscape(rest[1]))
	case "stop":
		return ctlStop(dir, *timeout)
	case "wait":
		deadline := time.Now().Add(*timeout)
		for time.Now().Before(deadline) {
			if env, err := readEnv(dir); err == nil {
				fmt.Println(env["server"])
				return nil
			}
			time.Sleep(200 * time.Millisecond)
		}
		return fmt.Errorf("no ready testenv in %s after %s", dir, *timeout)
	case "status":
		return ctlStatus(dir)
	}
	return errors.New(ctlUsage)
}

func controlAddr(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, fileControl))
	if err != nil {
		return "", fmt.Errorf("no running testenv in %s (%v); start one with `make apiserver`", dir, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func ctlPost(dir, path string) (string, error) {
	addr, err := controlAddr(dir)
	if err != nil {
		return "", err
	}
	c := &http.Client{Timeout: 120 * time.Second}
	resp, err := c.Post("http://"+addr+path, "text/plain", nil)
	if err != nil {
		return "", fmt.Errorf("control endpoint %s: %w", addr, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("%s: %s: %s", path, resp.Status, strings.TrimSpace(string(b)))
	}
	return strings.TrimSpace(string(b)), nil
}

func ctlPrint(dir, path string) error {
	out, err := ctlPost(dir, path)
	if err == nil {
		fmt.Println(out)
	}
	return err
}

// ctlStop asks the supervisor to stop and waits until it is gone. If the
// control endpoint is unreachable it falls back to the pid files, so a
// wedged instance still gets cleaned up.
func ctlStop(dir string, timeout time.Duration) error {
	supPid := readPid(filepath.Join(dir, fileSupPid))
	if _, err := ctlPost(dir, "/stop"); err != nil {
		if supPid == 0 {
			fmt.Printf("kube-testenv: nothing running in %s\n", dir)
			return nil
		}
		fmt.Fprintf(os.Stderr, "kube-testenv: control endpoint failed (%v); sending SIGTERM\n", err)
		killIfOurs(supPid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(timeout)
	for supPid != 0 && alive(supPid) {
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "kube-testenv: supervisor %d did not stop in %s; killing\n", supPid, timeout)
			killIfOurs(supPid, syscall.SIGKILL)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Children die with the supervisor (Pdeathsig); this is belt and braces.
	for _, f := range []string{fileNodePid, fileAPIPid, fileEtcdPid} {
		if pid := readPid(filepath.Join(dir, f)); pid != 0 && killIfOurs(pid, syscall.SIGKILL) {
			fmt.Fprintf(os.Stderr, "kube-testenv: killed leftover %s %d\n", f, pid)
		}
		_ = os.Remove(filepath.Join(dir, f))
	}
	fmt.Printf("kube-testenv: stopped (%s)\n", dir)
	return nil
}

func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killIfOurs only signals pids whose command line is kube-testenv, so a
// recycled pid never hits an unrelated process.
func killIfOurs(pid int, sig syscall.Signal) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "kube-testenv") {
		return false
	}
	return syscall.Kill(pid, sig) == nil
}

func rssKiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return 0
}

func ctlStatus(dir string) error {
	env, err := readEnv(dir)
	if err != nil {
		return fmt.Errorf("no running testenv in %s", dir)
	}
	fmt.Printf("server   %s (%s)\ncontrol  %s\n", env["server"], env["version"], env["control"])
	for _, f := range []string{fileSupPid, fileAPIPid, fileEtcdPid, fileNodePid} {
		pid := readPid(filepath.Join(dir, f))
		if pid == 0 && f == fileNodePid {
			continue // started with --no-node
		}
		fmt.Printf("%-14s pid %-7d rss %6.1f MiB\n", strings.TrimSuffix(f, ".pid"), pid, float64(rssKiB(pid))/1024)
	}
	return nil
}

// cmdFill creates many ConfigMaps, for memory measurements with a realistic
// amount of stored data.
func cmdFill(args []string) error {
	fs := flag.NewFlagSet("fill", flag.ExitOnError)
	stateDir := fs.String("state-dir", ".testenv", "state dir of the running testenv")
	count := fs.Int("count", 10000, "number of ConfigMaps (max 100000)")
	workers := fs.Int("workers", 16, "parallel requests")
	ns := fs.String("namespace", "fill", "namespace (created if missing)")
	_ = fs.Parse(args)
	if *count < 0 || *count > 100000 {
		return errors.New("--count must be within 0..100000")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(*stateDir, fileKubeconfig))
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 2000, 2000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	start := time.Now()
	var next, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(*count) {
					return
				}
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%06d", i), Labels: map[string]string{"fill": "true"}},
					Data:       map[string]string{"key": strings.Repeat("x", 100), "index": strconv.FormatInt(i, 10)},
				}
				if _, err := cs.CoreV1().ConfigMaps(*ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("created %d ConfigMaps in %s (%d failed)\n", *count, time.Since(start).Round(time.Millisecond), failed.Load())
	if e := firstErr.Load(); e != nil {
		return fmt.Errorf("first error: %v", e)
	}
	return nil
}
