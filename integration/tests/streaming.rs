//! Exec, attach, port-forward and logs through the real apiserver, to pods
//! run by the testenv's node (`testenv-node`: containers are local
//! processes, streamed by the kubelet's own streaming library).

mod support;

#[allow(dead_code)]
#[path = "../../examples/examples/pod_exec.rs"]
mod pod_exec;
#[allow(dead_code)]
#[path = "../../examples/examples/pod_logs_follow.rs"]
mod pod_logs_follow;
#[allow(dead_code)]
#[path = "../../examples/examples/pod_port_forward.rs"]
mod pod_port_forward;

use std::time::{Duration, Instant};

use clap::Parser as _;
use futures_util::StreamExt as _;
use k8s_client::api::core::v1::Pod;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::rest::logs::LogOptions;
use k8s_client_runtime::rest::remotecommand::{AttachParams, ExitStatus, Protocol, TerminalSize};
use k8s_client_runtime::rest::{CreateOptions, GetOptions, ResourceClient};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};

/// Creates a pod on the testenv's node whose containers run `containers`
/// (name, command), and waits until all of them run.
async fn running_pod(ns: &str, name: &str, containers: &[(&str, Vec<String>)]) -> ResourceClient<Pod> {
    let node = support::env().node_name().expect("the testenv runs its node");
    let containers: Vec<_> = containers
        .iter()
        .map(|(name, command)| json!({"name": name, "image": "ignored", "command": command}))
        .collect();
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"nodeName": node, "containers": containers, "terminationGracePeriodSeconds": 0},
    }))
    .unwrap();
    let pods = support::clientset().core_v1().pods(ns);
    pods.create(&pod, &CreateOptions::default()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let pod = pods.get(name, &GetOptions::default()).await.unwrap();
        let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref());
        let running = statuses.is_some_and(|s| {
            s.len() == containers.len() && s.iter().all(|c| c.state.as_ref().is_some_and(|st| st.running.is_some()))
        });
        if running {
            return pods;
        }
        assert!(Instant::now() < deadline, "pod {ns}/{name} not running: {:?}", pod.status);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn cmd(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| (*s).to_owned()).collect()
}

/// A pod whose one container just waits.
async fn idle_pod(ns: &str) -> ResourceClient<Pod> {
    running_pod(ns, "idle", &[("main", cmd(&["sleep", "3600"]))]).await
}

async fn read_to_end(mut r: impl AsyncRead + Unpin) -> Vec<u8> {
    let mut out = Vec::new();
    r.read_to_end(&mut out).await.unwrap();
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn exec_echo_reads_stdout_over_v5() {
    let ns = support::namespace("exec-echo");
    let pods = idle_pod(&ns).await;
    let mut process = pods.exec("idle", ["echo", "hello", "world"], &AttachParams::default()).await.unwrap();
    assert_eq!(process.protocol(), Protocol::V5);
    let out = read_to_end(process.stdout().unwrap()).await;
    assert_eq!(text(&out), "hello world\n");
    assert_eq!(process.join().await.unwrap(), ExitStatus::Success);
}

#[tokio::test]
async fn exec_stdin_through_cat_round_trips_10_mb() {
    let ns = support::namespace("exec-stdin");
    let pods = idle_pod(&ns).await;
    let params = AttachParams::default().stdin(true).stderr(false);
    let mut process = pods.exec("idle", ["cat"], &params).await.unwrap();
    let (mut stdin, stdout) = (process.stdin().unwrap(), process.stdout().unwrap());
    let data: Vec<u8> = (0..10 * 1024 * 1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let sent = data.clone();
    let writer = tokio::spawn(async move {
        stdin.write_all(&sent).await.unwrap();
        // The end of stdin reaches cat (v5's close), which then exits.
        stdin.shutdown().await.unwrap();
    });
    let echoed = tokio::time::timeout(Duration::from_secs(120), read_to_end(stdout)).await.expect("cat echoed all");
    writer.await.unwrap();
    assert_eq!(echoed.len(), data.len());
    assert!(echoed == data, "the echo differs from what was sent");
    assert_eq!(process.join().await.unwrap(), ExitStatus::Success);
}

#[tokio::test]
async fn exec_exit_code_3_is_typed_and_stderr_kept_apart() {
    let ns = support::namespace("exec-exit");
    let pods = idle_pod(&ns).await;
    let command = ["sh", "-c", "echo out; echo oops >&2; exit 3"];
    let mut process = pods.exec("idle", command, &AttachParams::default()).await.unwrap();
    let (stdout, stderr) = (process.stdout().unwrap(), process.stderr().unwrap());
    let (out, err) = tokio::join!(read_to_end(stdout), read_to_end(stderr));
    assert_eq!(text(&out), "out\n");
    assert_eq!(text(&err), "oops\n");
    let status = process.join().await.unwrap();
    assert_eq!(status, ExitStatus::Code(3));
    assert_eq!(status.code(), Some(3));

    // A command that cannot start is a failure with the runtime's Status.
    let process = pods.exec("idle", ["/no/such/binary"], &AttachParams::default()).await.unwrap();
    let status = process.join().await.unwrap();
    assert!(!status.success(), "{status:?}");
}

#[tokio::test]
async fn a_tty_resize_reaches_the_process() {
    let ns = support::namespace("exec-tty");
    let pods = idle_pod(&ns).await;
    let params = AttachParams::default().tty(true);
    let command = ["sh", "-c", "sleep 1; stty size; test -t 1 && echo tty"];
    let mut process = pods.exec("idle", command, &params).await.unwrap();
    assert!(process.stderr().is_none());
    let resizer = process.terminal_resizer().unwrap();
    resizer.resize(TerminalSize { width: 123, height: 45 }).await.unwrap();
    let out = text(&read_to_end(process.stdout().unwrap()).await);
    assert_eq!(out.replace('\r', ""), "45 123\ntty\n");
    assert_eq!(process.join().await.unwrap(), ExitStatus::Success);
}

#[tokio::test]
async fn attach_sees_the_output_of_the_running_process() {
    let ns = support::namespace("attach");
    let ticking = cmd(&["sh", "-c", "i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done"]);
    let pods = running_pod(&ns, "ticker", &[("main", ticking)]).await;
    let params = AttachParams::default().container("main");
    let mut process = pods.attach("ticker", &params).await.unwrap();
    let mut stdout = process.stdout().unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while text(&seen).matches("tick").count() < 3 {
        assert!(Instant::now() < deadline, "attach saw {:?}", text(&seen));
        let mut chunk = [0; 256];
        let n = tokio::time::timeout(Duration::from_secs(10), stdout.read(&mut chunk)).await.unwrap().unwrap();
        assert!(n > 0, "attach ended early after {:?}", text(&seen));
        seen.extend_from_slice(&chunk[..n]);
    }
    process.abort();
}

/// A free local port (bound and released; good enough on loopback).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn http_get(stream: &mut (impl AsyncRead + tokio::io::AsyncWrite + Unpin)) -> String {
    stream.write_all(b"GET / HTTP/1.0\r\nHost: pod\r\n\r\n").await.unwrap();
    text(&read_to_end(stream).await)
}

#[tokio::test]
async fn port_forward_answers_100_concurrent_requests_and_a_second_port() {
    let ns = support::namespace("port-forward");
    let binary = support::env().binary().display().to_string();
    let (alpha, beta) = (free_port(), free_port());
    let server = |port: u16, body: &str| {
        vec![binary.clone(), "serve-http".into(), "--port".into(), port.to_string(), "--body".into(), body.into()]
    };
    let pods = running_pod(&ns, "web", &[("alpha", server(alpha, "alpha")), ("beta", server(beta, "beta"))]).await;

    // Both servers listen once the pod runs, but may take a moment.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut forwarder = pods.port_forward("web", &[alpha]).await.unwrap();
        let answer = http_get(&mut forwarder.take_stream(alpha).unwrap()).await;
        if answer.contains("alpha") {
            break;
        }
        assert!(Instant::now() < deadline, "no answer on port {alpha}: {answer:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let listener = pods.port_forward_listener("web", "127.0.0.1:0".parse().unwrap(), alpha).await.unwrap();
    let local = listener.local_addr();
    let requests: Vec<_> = (0..100)
        .map(|_| {
            tokio::spawn(async move {
                let mut tcp = tokio::net::TcpStream::connect(local).await.unwrap();
                http_get(&mut tcp).await
            })
        })
        .collect();

    // Meanwhile, both ports over one WebSocket.
    let mut both = pods.port_forward("web", &[alpha, beta]).await.unwrap();
    let (mut a, mut b) = (both.take_stream(alpha).unwrap(), both.take_stream(beta).unwrap());
    let (answer_a, answer_b) = tokio::join!(http_get(&mut a), http_get(&mut b));
    assert!(answer_a.starts_with("HTTP/1.0 200") && answer_a.ends_with("alpha"), "{answer_a:?}");
    assert!(answer_b.starts_with("HTTP/1.0 200") && answer_b.ends_with("beta"), "{answer_b:?}");
    drop((a, b));
    both.join().await.unwrap();

    for request in requests {
        let answer = tokio::time::timeout(Duration::from_secs(60), request).await.unwrap().unwrap();
        assert!(answer.starts_with("HTTP/1.0 200") && answer.ends_with("alpha"), "{answer:?}");
    }
}

/// Proxy requests reach the apiserver's node and pod proxies. The
/// testenv's node and pods live on loopback, where the apiserver refuses to
/// proxy to ("address not allowed", 400): that refusal, and a missing pod's
/// 404, come back as its Status. (A proxied answer is covered by the
/// runtime's loopback tests.)
#[tokio::test]
async fn proxy_requests_reach_the_apiservers_proxies() {
    let node = support::env().node_name().unwrap();
    let nodes = support::clientset().core_v1().nodes();
    let err = nodes.proxy(http::Method::GET, node, "healthz").unwrap().bytes().await.unwrap_err();
    assert_eq!(err.code(), Some(400), "{err:?}");
    assert!(err.to_string().contains("address not allowed"), "{err}");

    let ns = support::namespace("proxy");
    let pods = idle_pod(&ns).await;
    let err = pods.proxy(http::Method::GET, "idle:8080", "/").unwrap().bytes().await.unwrap_err();
    assert_eq!(err.code(), Some(400), "{err:?}");
    assert!(err.to_string().contains("address not allowed"), "{err}");
    let err = pods.proxy(http::Method::GET, "missing", "/").unwrap().bytes().await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

#[tokio::test]
async fn port_forward_to_a_closed_port_reports_the_error_channel() {
    let ns = support::namespace("port-forward-err");
    let pods = idle_pod(&ns).await;
    let closed = free_port();
    let mut forwarder = pods.port_forward("idle", &[closed]).await.unwrap();
    let error = forwarder.take_error(closed).unwrap();
    let mut stream = forwarder.take_stream(closed).unwrap();
    let _ = stream.write_all(b"GET / HTTP/1.0\r\n\r\n").await;
    let message = tokio::time::timeout(Duration::from_secs(20), error).await.unwrap();
    let message = message.expect("an error on the error channel");
    assert!(message.contains(&closed.to_string()), "{message}");
}

#[tokio::test]
async fn log_stream_follows_appended_lines_and_end_with_the_container() {
    let ns = support::namespace("logs-follow");
    let script = cmd(&["sh", "-c", "echo first; sleep 3; echo second; echo third"]);
    let pods = running_pod(&ns, "writer", &[("main", script)]).await;
    let opts = LogOptions { follow: Some(true), container: Some("main".into()), ..LogOptions::default() };
    let opened = Instant::now();
    let mut lines = pods.log_stream("writer", &opts).await.unwrap();
    let mut seen = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next().await {
            seen.push(text(&line.unwrap()));
        }
    })
    .await;
    assert!(ended.is_ok(), "the follow did not end with the container; saw {seen:?}");
    assert_eq!(seen, ["first", "second", "third"]);
    // "second" was written seconds after the stream opened.
    assert!(opened.elapsed() >= Duration::from_secs(1), "{:?}", opened.elapsed());

    // The log of the ended container, with the other options.
    let tail = LogOptions { tail_lines: Some(1), timestamps: Some(true), ..LogOptions::default() };
    let last: Vec<_> = pods.log_stream("writer", &tail).await.unwrap().collect().await;
    assert_eq!(last.len(), 1);
    let last = text(&last[0].as_ref().unwrap().clone());
    assert!(last.ends_with(" third") && last.starts_with("20"), "{last}");
    // The generated client's params work too.
    let generated = k8s_client::clientset::core_v1::PodLogParams { tail_lines: Some(2), ..Default::default() };
    let two: Vec<_> = pods.log_stream("writer", &generated).await.unwrap().collect().await;
    assert_eq!(two.len(), 2);
}

#[tokio::test]
async fn the_unprivileged_user_gets_403_on_exec_and_port_forward() {
    let ns = support::namespace("exec-forbidden");
    idle_pod(&ns).await;
    let pods: ResourceClient<Pod> = Clientset::new(support::client_for(Some("unprivileged"))).core_v1().pods(&ns);
    let err = pods.exec("idle", ["echo"], &AttachParams::default()).await.unwrap_err();
    assert!(err.is_forbidden(), "{err:?}");
    assert_eq!(err.code(), Some(403));
    let err = pods.port_forward("idle", &[80]).await.unwrap_err();
    assert!(err.is_forbidden(), "{err:?}");
}

#[tokio::test]
async fn a_dropped_exec_leaves_no_process_behind() {
    let ns = support::namespace("exec-cancel");
    let pods = idle_pod(&ns).await;
    let command = ["sh", "-c", "echo $$; while true; do echo busy; sleep 0.1; done"];
    let mut process = pods.exec("idle", command, &AttachParams::default()).await.unwrap();
    let mut stdout = process.stdout().unwrap();
    let mut first = Vec::new();
    while !first.contains(&b'\n') {
        let mut chunk = [0; 64];
        let n = stdout.read(&mut chunk).await.unwrap();
        assert!(n > 0);
        first.extend_from_slice(&chunk[..n]);
    }
    let pid: u32 = text(&first).lines().next().unwrap().trim().parse().unwrap();
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(proc_dir.exists(), "the command runs on this machine");
    drop(process);
    let deadline = Instant::now() + Duration::from_secs(20);
    while proc_dir.exists() && !is_zombie(&proc_dir) {
        assert!(Instant::now() < deadline, "process {pid} still runs after its exec was dropped");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn is_zombie(proc_dir: &std::path::Path) -> bool {
    std::fs::read_to_string(proc_dir.join("stat"))
        .map(|s| s.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
        .unwrap_or(true)
}

/// The examples, run as their command lines say.
#[tokio::test]
async fn the_streaming_examples_run_as_documented() {
    let ns = support::namespace("examples");
    let binary = support::env().binary().display().to_string();
    let port = free_port();
    let server = vec![binary, "serve-http".into(), "--port".into(), port.to_string(), "--body".into(), "hi".into()];
    let log = cmd(&["sh", "-c", "echo one; sleep 2; echo two"]);
    running_pod(&ns, "demo", &[("idle", cmd(&["sleep", "3600"])), ("web", server), ("log", log)]).await;

    let exec = pod_exec::Args::parse_from(["pod_exec", &ns, "demo", "-c", "idle", "--", "sh", "-c", "exit 3"]);
    assert_eq!(pod_exec::run(support::clientset(), exec).await.unwrap(), 3);

    let logs = pod_logs_follow::Args::parse_from(["pod_logs_follow", &ns, "demo", "-c", "log"]);
    let mut out = Vec::new();
    let followed = pod_logs_follow::follow(support::clientset(), logs, &mut out);
    tokio::time::timeout(Duration::from_secs(30), followed).await.expect("ends with the container").unwrap();
    assert_eq!(text(&out), "one\ntwo\n");

    let spec = format!(":{port}");
    let forward = pod_port_forward::Args::parse_from(["pod_port_forward", &ns, "demo", &spec]);
    let listeners = pod_port_forward::forward(support::clientset(), forward).await.unwrap();
    let local = listeners[0].local_addr();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut tcp = tokio::net::TcpStream::connect(local).await.unwrap();
        let answer = http_get(&mut tcp).await;
        if answer.ends_with("hi") {
            break;
        }
        assert!(Instant::now() < deadline, "no answer through the forward: {answer:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// 100 MB through `cat` and back, ours against `kubectl exec -i` (when on
/// the PATH) in the same run. A figure, not a check: run it alone, on an
/// idle machine.
#[tokio::test]
#[ignore = "a throughput figure; run alone: cargo test -p k8s-client-integration --test streaming -- --ignored"]
async fn exec_throughput_100_mb() {
    const SIZE: usize = 100 * 1024 * 1024;
    let ns = support::namespace("exec-throughput");
    let pods = idle_pod(&ns).await;
    let data: Vec<u8> = (0..SIZE).map(|i| (i % 253) as u8).collect();

    let started = Instant::now();
    let params = AttachParams::default().stdin(true).stderr(false);
    let mut process = pods.exec("idle", ["cat"], &params).await.unwrap();
    let (mut stdin, stdout) = (process.stdin().unwrap(), process.stdout().unwrap());
    let sent = data.clone();
    let writer = tokio::spawn(async move {
        stdin.write_all(&sent).await.unwrap();
        stdin.shutdown().await.unwrap();
    });
    let echoed = read_to_end(stdout).await;
    writer.await.unwrap();
    assert_eq!(process.join().await.unwrap(), ExitStatus::Success);
    assert!(echoed == data);
    let ours = started.elapsed();
    println!("k8s-client-runtime exec: 100 MB round trip in {ours:?}: {:.1} MB/s", 100.0 / ours.as_secs_f64());

    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &data).unwrap();
    let kubeconfig = support::env().kubeconfig_path().to_owned();
    let started = Instant::now();
    let output = std::process::Command::new("kubectl")
        .args(["exec", "-i", "-n", &ns, "idle", "--", "cat"])
        .env("KUBECONFIG", kubeconfig)
        .stdin(std::fs::File::open(file.path()).unwrap())
        .output();
    match output {
        Ok(output) if output.status.success() => {
            assert!(output.stdout == data, "kubectl's echo differs");
            let kubectl = started.elapsed();
            println!("kubectl exec -i: 100 MB round trip in {kubectl:?}: {:.1} MB/s", 100.0 / kubectl.as_secs_f64());
        }
        Ok(output) => println!("kubectl exec failed: {}", String::from_utf8_lossy(&output.stderr)),
        Err(e) => println!("kubectl not run: {e}"),
    }
}

/// 100 MB downloaded through a forwarded port, ours against `kubectl
/// port-forward` (when on the PATH) in the same run. The pod's network is
/// the host's loopback, so the test itself serves the bytes. A figure, not
/// a check: run it alone, on an idle machine.
#[tokio::test]
#[ignore = "a throughput figure; run alone: cargo test -p k8s-client-integration --test streaming -- --ignored"]
async fn port_forward_throughput_100_mb() {
    const SIZE: usize = 100 * 1024 * 1024;
    let ns = support::namespace("forward-throughput");
    let pods = idle_pod(&ns).await;
    let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = server.local_addr().unwrap().port();
    tokio::spawn(async move {
        let chunk = vec![7u8; 1024 * 1024];
        while let Ok((mut connection, _)) = server.accept().await {
            let chunk = chunk.clone();
            tokio::spawn(async move {
                for _ in 0..SIZE / chunk.len() {
                    if connection.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
                let _ = connection.shutdown().await;
            });
        }
    });

    let started = Instant::now();
    let mut forwarder = pods.port_forward("idle", &[port]).await.unwrap();
    let received = read_to_end(forwarder.take_stream(port).unwrap()).await;
    assert_eq!(received.len(), SIZE);
    let ours = started.elapsed();
    println!("k8s-client-runtime port-forward: 100 MB in {ours:?}: {:.1} MB/s", 100.0 / ours.as_secs_f64());

    let local = free_port();
    let kubectl = std::process::Command::new("kubectl")
        .args(["port-forward", "-n", &ns, "pod/idle", &format!("{local}:{port}")])
        .env("KUBECONFIG", support::env().kubeconfig_path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let mut kubectl = match kubectl {
        Ok(child) => child,
        Err(e) => return println!("kubectl not run: {e}"),
    };
    // Ready once it prints its first "Forwarding from" line.
    let mut ready = String::new();
    let mut out = std::io::BufReader::new(kubectl.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut ready).unwrap();
    assert!(ready.starts_with("Forwarding from"), "{ready:?}");
    let started = Instant::now();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", local)).await.unwrap();
    let received = read_to_end(tcp).await;
    let elapsed = started.elapsed();
    let _ = kubectl.kill();
    assert_eq!(received.len(), SIZE);
    println!("kubectl port-forward: 100 MB in {elapsed:?}: {:.1} MB/s", 100.0 / elapsed.as_secs_f64());
}
