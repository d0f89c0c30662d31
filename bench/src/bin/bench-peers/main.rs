//! `make bench-peers`: this project, client-go and kube-rs doing the same
//! work against one real kube-apiserver, in one run, alternating programs
//! (A B C A B C …); one table on stdout, the same as JSON and as an SVG bar
//! chart under `--out`. `make bench-smoke` runs it at 1/100 scale.
//!
//! The programs follow `bench/peers/PROTOCOL.md`; this harness starts the
//! apiserver and creates the pods (when sync or churn is asked for), drives
//! the churn writer, creates the Greetings of the operator workload and
//! builds the minimal pod-informer programs of the build workload.

mod cluster;
mod operator;
mod programs;
mod report;

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::ErrorChain;
use k8s_client_runtime::config::{Config, KubeconfigOptions};
use k8s_client_runtime::rest::Client;
use k8s_client_testenv::TestEnv;

use programs::{Peer, Program, Samples};

#[derive(Parser)]
#[command(about = "Runs this project, client-go and kube-rs side by side (bench/peers/PROTOCOL.md)")]
struct Args {
    /// This project's program (`k8s-client-peer`).
    #[arg(long, required_unless_present = "replot")]
    ours: Option<PathBuf>,
    /// The client-go program.
    #[arg(long, required_unless_present = "replot")]
    client_go: Option<PathBuf>,
    /// The kube-rs program.
    #[arg(long, required_unless_present = "replot")]
    kube_rs: Option<PathBuf>,
    /// This project's operator of the operator workload
    /// (`target/<profile>/examples/greeting_operator`).
    #[arg(long)]
    ours_operator: Option<PathBuf>,
    /// The operator on controller-runtime (its figures are client-go's column).
    #[arg(long)]
    controller_runtime: Option<PathBuf>,
    /// The operator on kube-rs's `Controller`.
    #[arg(long)]
    kube_rs_operator: Option<PathBuf>,
    /// Client requests per second of the operators (their `--qps`; burst
    /// twice that). High by default so that the figures compare the
    /// runtimes, not client-side rate limiters (client-go gives each of
    /// controller-runtime's per-kind clients a bucket of its own).
    #[arg(long, default_value_t = 5000.0)]
    operator_qps: f64,
    /// Fraction of the full workloads (10,000 pods, 30 s of churn, …); 0.01 for the smoke run.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Runs of each program per workload.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Where the figures go (`peers.json`, `peers.svg`).
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    /// The shared pod list the pods are made from.
    #[arg(long, default_value = k8s_client_bench::SHARED_PODLIST)]
    pods: PathBuf,
    /// Cargo profile of the build workload (`release`, or `dev` for the smoke run).
    #[arg(long, default_value = "release")]
    build_profile: String,
    /// Build each minimal program from nothing on every run (the build
    /// workload's figure); otherwise reuse their target directories.
    #[arg(long)]
    clean_builds: bool,
    /// Use the running test apiserver of this kubeconfig (`make apiserver`:
    /// `.testenv/kubeconfig`) instead of starting one; pods already there
    /// from an earlier run are kept.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Only redraw the chart of a `peers.json` written earlier (into `--out`).
    #[arg(long)]
    replot: Option<PathBuf>,
    /// The workloads to run, of decode, sync, churn, workqueue, operator, build.
    #[arg(long, value_delimiter = ',', default_value = "decode,sync,churn,workqueue,operator,build")]
    workloads: Vec<String>,
}

#[tokio::main]
async fn main() {
    if let Err(e) = run(Args::parse()).await {
        eprintln!("bench-peers: {}", ErrorChain(&*e));
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(json) = &args.replot {
        let figures: serde_json::Value = serde_json::from_slice(&std::fs::read(json)?)?;
        let svg = args.out.join("peers.svg");
        report::chart(&report::Table::from_json(&figures), &report::RunInfo::from_json(&figures), &svg)?;
        eprintln!("bench-peers: wrote {}", svg.display());
        return Ok(());
    }
    let scaled = |n: f64| ((n * args.scale).round() as usize).max(1);
    let total_pods = scaled(10_000.0);
    let decode_pods = scaled(5_000.0);
    let churn_seconds = (30.0 * args.scale).max(2.0);
    let churn_rate = 200.0;
    let queue_items = scaled(200_000.0);
    let greetings = scaled(1_000.0);
    let runs = args.runs.max(1);
    std::fs::create_dir_all(&args.out)?;

    let list = programs::read_pod_list(&args.pods)?;
    let decode_file = args.out.join("podlist.json");
    programs::write_pod_list(&list, decode_pods, &decode_file)?;

    let program =
        |peer, path: &Option<PathBuf>| path.as_deref().map(|p| Program::new(peer, p)).ok_or("no program path");
    let ours = program(Peer::Ours, &args.ours)?;
    let client_go = program(Peer::ClientGo, &args.client_go)?;
    let kube_rs = program(Peer::KubeRs, &args.kube_rs)?;
    let mut samples = Samples::default();

    let wanted = |w: &str| args.workloads.iter().any(|x| x == w);
    // Checked before any workload runs, as the operators are built apart
    // from the other programs.
    let operators = if wanted("operator") {
        if !(args.operator_qps.is_finite() && args.operator_qps > 0.0) {
            return Err("--operator-qps must be a positive number".into());
        }
        let given = |peer, path: &Option<PathBuf>, flag: &str, how: &str| {
            let path = path.as_deref().ok_or_else(|| format!("the operator workload needs {flag}"))?;
            let p = Program::new(peer, path);
            p.check_built(how)?;
            Ok::<_, Box<dyn std::error::Error>>(p)
        };
        vec![
            given(
                Peer::Ours,
                &args.ours_operator,
                "--ours-operator",
                "`make peers-build` builds it: cargo build -p k8s-client-examples --example greeting_operator",
            )?,
            given(
                Peer::ClientGo,
                &args.controller_runtime,
                "--controller-runtime",
                "`make peers-build` builds it: go build in bench/peers/controller-runtime",
            )?,
            given(
                Peer::KubeRs,
                &args.kube_rs_operator,
                "--kube-rs-operator",
                "`make peers-build` builds it: cargo build in bench/peers/kube-rs",
            )?,
        ]
    } else {
        Vec::new()
    };
    if wanted("decode") {
        eprintln!("bench-peers: decode ({decode_pods} pods, {runs} runs)");
        let decode_args = ["decode", "--file", path_str(&decode_file)?, "--rounds", "5"];
        for _ in 0..runs {
            for p in [&ours, &client_go, &kube_rs] {
                let f = p.run(&decode_args)?;
                samples.add("decode", "throughput, MB/s", p.peer, f.num("bytes")? / f.num("median_s")? / 1e6);
                samples.add("decode", "heap per pod, bytes", p.peer, f.num("heap_bytes_per_pod")?);
            }
        }
        // The same list as the apiserver sends it in protobuf, written by
        // client-go; kube-rs has no protobuf.
        let protobuf_file = args.out.join("podlist.pb");
        client_go.run(&["encode-protobuf", "--in", path_str(&decode_file)?, "--out", path_str(&protobuf_file)?])?;
        let decode_args = ["decode", "--file", path_str(&protobuf_file)?, "--rounds", "5"];
        for _ in 0..runs {
            for p in [&ours, &client_go] {
                let f = p.run(&decode_args)?;
                let row = "decode, protobuf";
                samples.add(row, "throughput, MB/s", p.peer, f.num("bytes")? / f.num("median_s")? / 1e6);
                samples.add(row, "heap per pod, bytes", p.peer, f.num("heap_bytes_per_pod")?);
            }
        }
    }

    // Only the informer and operator workloads need the apiserver, and only
    // the informer ones its pods (about two minutes to start and fill).
    let mut apiserver = String::from("not started");
    if wanted("sync") || wanted("churn") || wanted("operator") {
        let env = match &args.kubeconfig {
            Some(kubeconfig) => TestEnv::attach(kubeconfig),
            None => {
                eprintln!("bench-peers: starting the apiserver");
                TestEnv::start()
            }
        };
        let kubeconfig = env.kubeconfig_path();
        let kc = path_str(&kubeconfig)?.to_owned();
        apiserver = env.version().to_owned();
        let admin = admin_client(&kubeconfig)?;
        let clientset = Clientset::new(admin.clone());
        let pods = if wanted("sync") || wanted("churn") {
            cluster::populate(&clientset, &list, total_pods, 10).await?
        } else {
            Vec::new()
        };
        let expect = pods.len().to_string();

        if wanted("sync") {
            eprintln!("bench-peers: informer sync ({total_pods} pods, {runs} runs)");
            // (peer, rows, flags): each peer as it comes and with managedFields
            // dropped. client-go's clients of built-in kinds talk protobuf unless
            // told otherwise, as ours do; both also run forced to JSON, which
            // kube-rs always speaks (its runs count in both rows).
            // Ours drops managedFields by default (the flag is accepted and
            // ignored) and speaks protobuf unless `--json`.
            // Ours also with the DeltaFIFO, the queue its informers used before
            // the RealFIFO (as client-go's before 1.33). Placed right after
            // ours by default it measured 0.46 s against 0.78 s, while 10 runs
            // alternating the two gave both 0.75 s: a protobuf sync right after
            // another came out faster. Like ours by default, it runs after a
            // JSON sync.
            // Metadata only: ours, client-go's metadatainformer and kube-rs's
            // watcher of `PartialObjectMeta<Pod>`, all without managedFields
            // (ours drops them by default).
            // Ours with metrics and spans on, beside ours by default: their
            // cost.
            let variants: [(&Program, &[&str], &[&str]); 13] = [
                (&ours, &["default", "managedFields dropped"], &[]),
                (&ours, &["JSON", "JSON, managedFields dropped"], &["--json"]),
                (&client_go, &["default"], &[]),
                (&kube_rs, &["default", "JSON"], &[]),
                (&client_go, &["managedFields dropped"], &["--drop-managed-fields"]),
                (&kube_rs, &["managedFields dropped", "JSON, managedFields dropped"], &["--drop-managed-fields"]),
                (&client_go, &["JSON"], &["--json"]),
                (&ours, &["DeltaFIFO"], &["--queue", "delta-fifo"]),
                (&client_go, &["JSON, managedFields dropped"], &["--json", "--drop-managed-fields"]),
                (&ours, &["metadata only"], &["--metadata"]),
                (&client_go, &["metadata only"], &["--metadata", "--drop-managed-fields"]),
                (&kube_rs, &["metadata only"], &["--metadata", "--drop-managed-fields"]),
                (&ours, &["metrics and spans"], &["--observe"]),
            ];
            for _ in 0..runs {
                for (p, labels, flags) in variants {
                    let mut argv = vec!["sync", "--kubeconfig", &kc, "--expect", &expect];
                    argv.extend_from_slice(flags);
                    let f = p.run(&argv)?;
                    for label in labels {
                        let workload = format!("sync, {label}");
                        samples.add(&workload, "time to synced, s", p.peer, f.num("synced_s")?);
                        samples.add(&workload, "RSS per cached pod, bytes", p.peer, f.num("rss_per_pod_bytes")?);
                        samples.add(&workload, "RSS after sync, MiB", p.peer, f.num("rss_after_kib")? / 1024.0);
                        samples.add(&workload, "peak RSS, MiB", p.peer, f.num("peak_rss_kib")? / 1024.0);
                    }
                }
            }
        }

        if wanted("churn") {
            eprintln!("bench-peers: churn ({churn_rate}/s for {churn_seconds} s, {runs} runs)");
            let duration = churn_seconds.to_string();
            for _ in 0..runs {
                // (program, row, extra flags): ours also with the DeltaFIFO.
                let variants: [(&Program, &str, &[&str]); 5] = [
                    (&ours, "churn", &[]),
                    (&ours, "churn, metrics and spans", &["--observe"]),
                    (&ours, "churn, DeltaFIFO", &["--queue", "delta-fifo"]),
                    (&client_go, "churn", &[]),
                    (&kube_rs, "churn", &[]),
                ];
                for (p, row, flags) in variants {
                    let mut argv = vec!["churn", "--kubeconfig", &kc, "--expect", &expect, "--duration", &duration];
                    argv.extend_from_slice(flags);
                    let running = p.start(&argv).await?;
                    let writes =
                        cluster::churn_writer(&clientset, &pods, churn_rate, Duration::from_secs_f64(churn_seconds));
                    let (f, written) = running.finish_after(writes).await?;
                    samples.add(row, "events delivered, per s", p.peer, f.num("events_per_s")?);
                    samples.add(row, "latency p50, ms", p.peer, f.num("p50_ms")?);
                    samples.add(row, "latency p99, ms", p.peer, f.num("p99_ms")?);
                    samples.add(row, "informer CPU, s", p.peer, f.num("cpu_s")?);
                    let events = f.num("events")? as usize;
                    if events < written {
                        return Err(format!("{}: {events} update events for {written} writes", p.peer.name()).into());
                    }
                }
            }
        }

        if wanted("operator") {
            eprintln!(
                "bench-peers: operator ({greetings} Greetings of {} ConfigMaps, --qps {}, {runs} runs)",
                operator::REPLICAS,
                args.operator_qps
            );
            let tag = format!("{:x}", k8s_client_bench::unix_nanos() / 1_000_000_000 % 0x100_0000);
            let warm_up = operator::create_namespace(&clientset, &format!("op-warm-up-{tag}")).await?;
            operator::install_crd(&admin, &warm_up).await?;
            let workload = operator::Workload {
                client: &admin,
                kubeconfig: &kubeconfig,
                greetings,
                qps: args.operator_qps,
                logs: &args.out,
                tag,
            };
            for run in 0..runs {
                for p in &operators {
                    let f = workload.run(&clientset, p, run).await?;
                    samples.add("operator", "time to all Ready, s", p.peer, f.ready_s);
                    samples.add("operator", "peak RSS, MiB", p.peer, f.peak_rss_kib / 1024.0);
                    samples.add("operator", "CPU, s", p.peer, f.cpu_s);
                    samples.add("operator", "API requests", p.peer, f.requests);
                }
            }
        }
        drop(env);
    }

    if wanted("workqueue") {
        eprintln!("bench-peers: workqueue ({queue_items} items, {runs} runs)");
        let items = queue_items.to_string();
        for _ in 0..runs {
            for workers in ["1", "4"] {
                for p in [&ours, &client_go] {
                    let f = p.run(&["workqueue", "--workers", workers, "--items", &items])?;
                    samples.add(&format!("workqueue, {workers} worker(s)"), "ops/s", p.peer, f.num("ops_per_s")?);
                }
            }
        }
    }

    if wanted("build") {
        eprintln!("bench-peers: build ({} profile, {runs} runs)", args.build_profile);
        let builds = programs::MinimalBuilds::new(&args.out, &args.build_profile, args.clean_builds);
        for _ in 0..runs {
            for program in [programs::Minimal::Informer, programs::Minimal::List] {
                for peer in [Peer::Ours, Peer::KubeRs] {
                    let (seconds, bytes) = builds.build(peer, program)?;
                    let what = if args.clean_builds { "clean build" } else { "build" };
                    samples.add(program.workload(), &format!("{what}, s"), peer, seconds);
                    samples.add(program.workload(), "binary size, MB", peer, bytes / 1e6);
                }
            }
        }
    }

    let pods = if wanted("sync") || wanted("churn") { total_pods } else { 0 };
    let run_info = report::RunInfo::collect(args.scale, runs, apiserver, pods, decode_pods, greetings);
    let table = report::Table::new(&samples);
    println!("{}", table.render(&run_info));
    let json = args.out.join("peers.json");
    std::fs::write(&json, serde_json::to_string_pretty(&table.to_json(&run_info))?)?;
    let svg = args.out.join("peers.svg");
    report::chart(&table, &run_info, &svg)?;
    eprintln!("bench-peers: wrote {} and {}", json.display(), svg.display());
    Ok(())
}

fn admin_client(kubeconfig: &std::path::Path) -> Result<Client, Box<dyn std::error::Error>> {
    let mut config = Config::from_kubeconfig_file(kubeconfig, &KubeconfigOptions::default())?;
    config.qps = 2000.0;
    config.burst = 4000;
    Ok(Client::new(config)?)
}

fn path_str(p: &std::path::Path) -> Result<&str, String> {
    p.to_str().ok_or_else(|| format!("{} is not UTF-8", p.display()))
}
