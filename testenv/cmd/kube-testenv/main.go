// Command kube-testenv runs a real kube-apiserver (plus an embedded etcd) on
// loopback for the project's tests. One binary holds every role; the
// supervisor re-executes itself for the etcd and apiserver children because
// an in-process apiserver cannot be restarted cleanly (global metrics and
// feature-gate registries). See testenv/README.md.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	_ "time/tzdata" // CronJob time zones, as in the upstream kube-apiserver main

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/component-base/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

const usage = `usage: kube-testenv <command> [flags]

commands:
  start    run the supervisor (etcd + kube-apiserver) until stopped
  ctl      talk to a running supervisor: restart | compact | stop | namespace NAME | status | wait
  specs    start a temporary apiserver and save its OpenAPI v3 documents
  fill     create N ConfigMaps in a running testenv (for measurements)
  proto-testdata  write the Go types' protobuf and JSON bytes of testdata objects
  version  print the Kubernetes version compiled in
  client-cert  write a new CA and a client certificate it signs (for --client-ca-file tests)

  serve-http  answer HTTP GETs on 127.0.0.1:PORT with a fixed body (a server for pods on the node)

internal (started by the supervisor):
  etcd, apiserver, node
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "start":
		err = cmdStart(args)
	case "ctl":
		err = cmdCtl(args)
	case "specs":
		err = cmdSpecs(args)
	case "fill":
		err = cmdFill(args)
	case "proto-testdata":
		err = cmdProtoTestdata(args)
	case "version":
		fmt.Println(version.Get().GitVersion)
	case "etcd":
		err = runEtcd(args)
	case "node":
		err = runNode(args)
	case "serve-http":
		err = cmdServeHTTP(args)
	case "client-cert":
		err = cmdClientCert(args)
	case "apiserver":
		// cli.Run sets up logging/flags the way the upstream binary does.
		c := app.NewAPIServerCommand()
		c.SetArgs(args)
		os.Exit(cli.Run(c))
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "kube-testenv: unknown command %q\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kube-testenv %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

// runEtcd is the etcd child process: a single-member cluster on loopback.
func runEtcd(args []string) error {
	fs := flag.NewFlagSet("etcd", flag.ExitOnError)
	dataDir := fs.String("data-dir", "", "etcd data directory")
	clientPort := fs.Int("client-port", 0, "client port on 127.0.0.1")
	peerPort := fs.Int("peer-port", 0, "peer port on 127.0.0.1")
	_ = fs.Parse(args)

	cfg := embed.NewConfig()
	cfg.Name = "testenv"
	cfg.Dir = *dataDir
	cu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *clientPort)}
	pu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *peerPort)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{"stderr"}
	// Test data is disposable: skipping fsync makes writes (and thus test
	// setup such as creating thousands of objects) an order of magnitude faster.
	cfg.UnsafeNoFsync = true

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("starting etcd in %s: %w", *dataDir, err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintln(os.Stderr, "kube-testenv etcd: ready")
	case err := <-e.Err():
		return err
	case <-sig:
		e.Close()
		return nil
	}
	select {
	case err := <-e.Err():
		return err
	case <-sig:
		e.Close()
		return nil
	}
}
