//! Exec, attach, port-forward, logs and proxy against a scripted loopback
//! WebSocket server: what the client sends (query, subprotocols, frames)
//! and how it reads the server's frames. The apiserver's own behaviour is
//! the integration tests' business.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _, TryStreamExt as _};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request as WsRequest, Response as WsResponse};

use super::server::{Reply, TestServer};
use crate::rest::logs::LogOptions;
use crate::rest::remotecommand::{AttachParams, ExitStatus, Protocol, TerminalSize};
use crate::rest::*;
use crate::testing::Pod;

impl HasExec for Pod {}
impl HasAttach for Pod {}
impl HasPortForward for Pod {}
impl HasLog for Pod {}
impl HasProxy for Pod {}

type Socket = WebSocketStream<TcpStream>;

/// How the server answers the upgrade.
#[derive(Clone)]
enum Answer {
    /// Switch protocols, choosing the first offered of these (none: no
    /// `Sec-WebSocket-Protocol` in the answer).
    Choose(&'static [&'static str]),
    /// Refuse with this status and JSON body.
    Refuse(u16, serde_json::Value),
}

/// The upgrade request as the server saw it.
#[derive(Debug, Clone)]
struct Upgrade {
    uri: String,
    protocols: String,
    authorization: Option<String>,
}

struct WsServer {
    url: String,
    upgrades: Arc<Mutex<Vec<Upgrade>>>,
}

impl WsServer {
    async fn start<F, Fut>(answer: Answer, script: F) -> WsServer
    where
        F: Fn(Socket) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let upgrades: Arc<Mutex<Vec<Upgrade>>> = Arc::default();
        let recorded = upgrades.clone();
        let script = Arc::new(script);
        tokio::spawn(async move {
            loop {
                let (tcp, _) = listener.accept().await.unwrap();
                let (answer, recorded, script) = (answer.clone(), recorded.clone(), script.clone());
                tokio::spawn(async move {
                    // The callback's type is tungstenite's.
                    #[allow(clippy::result_large_err)]
                    let callback = |req: &WsRequest, mut resp: WsResponse| -> Result<WsResponse, ErrorResponse> {
                        let header = |n: &str| req.headers().get(n).and_then(|v| v.to_str().ok()).map(str::to_owned);
                        let offered = header("sec-websocket-protocol").unwrap_or_default();
                        recorded.lock().unwrap().push(Upgrade {
                            uri: req.uri().to_string(),
                            protocols: offered.clone(),
                            authorization: header("authorization"),
                        });
                        match answer {
                            Answer::Choose(known) => {
                                let offered: Vec<&str> = offered.split(',').map(str::trim).collect();
                                if let Some(p) = offered.iter().find(|p| known.contains(p)) {
                                    resp.headers_mut().insert("sec-websocket-protocol", p.parse().unwrap());
                                }
                                Ok(resp)
                            }
                            Answer::Refuse(code, body) => Err(http::Response::builder()
                                .status(code)
                                .header("content-type", "application/json")
                                .body(Some(body.to_string()))
                                .unwrap()),
                        }
                    };
                    if let Ok(socket) = tokio_tungstenite::accept_hdr_async(tcp, callback).await {
                        script(socket).await;
                    }
                });
            }
        });
        WsServer { url, upgrades }
    }

    fn pods(&self) -> ResourceClient<Pod> {
        let mut config = crate::config::Config::new(self.url.parse().unwrap());
        config.qps = 0.0;
        config.auth = crate::config::Auth::Bearer("secret-token".into());
        ResourceClient::namespaced(Client::new(config).unwrap(), "ns")
    }

    fn upgrades(&self) -> Vec<Upgrade> {
        self.upgrades.lock().unwrap().clone()
    }
}

fn binary(channel: u8, data: &[u8]) -> Message {
    let mut m = vec![channel];
    m.extend_from_slice(data);
    Message::Binary(m.into())
}

fn exit_code_status(code: i32) -> Vec<u8> {
    json!({"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":code.to_string()}]}}).to_string().into_bytes()
}

async fn read_all(mut r: impl tokio::io::AsyncRead + Unpin) -> Vec<u8> {
    let mut out = Vec::new();
    r.read_to_end(&mut out).await.unwrap();
    out
}

const V5_V4: &[&str] = &["v5.channel.k8s.io", "v4.channel.k8s.io"];

#[tokio::test]
async fn exec_reads_stdout_and_stderr_apart_and_a_typed_exit_code() {
    let server = WsServer::start(Answer::Choose(V5_V4), |mut ws| async move {
        ws.send(binary(1, b"")).await.unwrap();
        ws.send(binary(1, b"out")).await.unwrap();
        ws.send(binary(2, b"err")).await.unwrap();
        ws.send(binary(1, b"put")).await.unwrap();
        ws.send(binary(3, &exit_code_status(3))).await.unwrap();
        ws.close(None).await.unwrap();
    })
    .await;
    let params = AttachParams::default().container("app");
    let mut process = server.pods().exec("web", ["sh", "-c", "exit 3"], &params).await.unwrap();
    assert_eq!(process.protocol(), Protocol::V5);
    assert!(process.stdin().is_none());
    let (stdout, stderr) = (process.stdout().unwrap(), process.stderr().unwrap());
    let (out, err) = tokio::join!(read_all(stdout), read_all(stderr));
    assert_eq!(out, b"output");
    assert_eq!(err, b"err");
    let status = process.join().await.unwrap();
    assert_eq!(status, ExitStatus::Code(3));
    assert_eq!(status.code(), Some(3));

    let upgrade = &server.upgrades()[0];
    assert_eq!(
        upgrade.uri,
        "/api/v1/namespaces/ns/pods/web/exec?command=sh&command=-c&command=exit+3&container=app&stdin=false&stdout=true&stderr=true&tty=false"
    );
    assert_eq!(upgrade.protocols, "v5.channel.k8s.io, v4.channel.k8s.io");
    assert_eq!(upgrade.authorization.as_deref(), Some("Bearer secret-token"));
}

/// Echoes stdin to stdout until stdin is closed, then reports success;
/// records every message that was not stdin.
fn echo_until_stdin_closes(
    others: Arc<Mutex<Vec<Vec<u8>>>>,
) -> impl Fn(Socket) -> futures_util::future::BoxFuture<'static, ()> {
    move |mut ws| {
        let others = others.clone();
        Box::pin(async move {
            while let Some(Ok(message)) = ws.next().await {
                let Message::Binary(data) = message else { continue };
                match data.first() {
                    Some(0) => ws.send(binary(1, &data[1..])).await.unwrap(),
                    Some(255) => {
                        others.lock().unwrap().push(data.to_vec());
                        ws.send(binary(3, br#"{"metadata":{},"status":"Success"}"#)).await.unwrap();
                        ws.close(None).await.unwrap();
                        return;
                    }
                    _ => {
                        let echo = data[1..].to_vec();
                        others.lock().unwrap().push(data.to_vec());
                        ws.send(binary(1, &echo)).await.unwrap();
                    }
                }
            }
        })
    }
}

#[tokio::test]
async fn stdin_round_trips_and_its_end_closes_the_remote_stdin_with_v5() {
    let others = Arc::default();
    let server = WsServer::start(Answer::Choose(V5_V4), echo_until_stdin_closes(Arc::clone(&others))).await;
    // A small buffer: back-pressure must not deadlock a concurrent copy.
    let params = AttachParams { buffer: 1024, ..AttachParams::default().stdin(true).stderr(false) };
    let mut process = server.pods().exec("web", ["cat"], &params).await.unwrap();
    let (mut stdin, stdout) = (process.stdin().unwrap(), process.stdout().unwrap());
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let expected = data.clone();
    let writer = tokio::spawn(async move {
        stdin.write_all(&data).await.unwrap();
        stdin.shutdown().await.unwrap();
    });
    let echoed = tokio::time::timeout(Duration::from_secs(20), read_all(stdout)).await.unwrap();
    writer.await.unwrap();
    assert_eq!(echoed.len(), expected.len());
    assert!(echoed == expected);
    assert_eq!(process.join().await.unwrap(), ExitStatus::Success);
    assert_eq!(*others.lock().unwrap(), vec![vec![255, 0]]);
}

#[tokio::test]
async fn v4_is_the_fallback_and_has_no_close_message() {
    let seen: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let recorded = seen.clone();
    let server = WsServer::start(Answer::Choose(&["v4.channel.k8s.io"]), move |mut ws| {
        let recorded = recorded.clone();
        async move {
            // Reads until the client goes, then there is nothing to answer.
            while let Some(Ok(Message::Binary(data))) = ws.next().await {
                recorded.lock().unwrap().push(data.to_vec());
                if data.first() == Some(&0) {
                    ws.send(binary(3, br#"{"status":"Success"}"#)).await.unwrap();
                    ws.close(None).await.unwrap();
                }
            }
        }
    })
    .await;
    let params = AttachParams::default().stdin(true);
    let mut process = server.pods().exec("web", ["cat"], &params).await.unwrap();
    assert_eq!(process.protocol(), Protocol::V4);
    let mut stdin = process.stdin().unwrap();
    stdin.write_all(b"x").await.unwrap();
    drop(stdin);
    assert_eq!(process.join().await.unwrap(), ExitStatus::Success);
    assert!(seen.lock().unwrap().iter().all(|m| m[0] != 255), "{:?}", seen.lock().unwrap());
}

#[tokio::test]
async fn a_tty_sends_resizes_and_connects_no_stderr() {
    let others = Arc::default();
    let server = WsServer::start(Answer::Choose(V5_V4), echo_until_stdin_closes(Arc::clone(&others))).await;
    let params = AttachParams::default().stdin(true).tty(true);
    let mut process = server.pods().attach("web", &params).await.unwrap();
    assert!(process.stderr().is_none());
    let resizer = process.terminal_resizer().unwrap();
    let mut stdout = process.stdout().unwrap();
    resizer.resize(TerminalSize { width: 100, height: 40 }).await.unwrap();
    let expected = br#"{"Width":100,"Height":40}"#;
    let mut echoed = vec![0; expected.len()];
    stdout.read_exact(&mut echoed).await.unwrap();
    assert_eq!(&echoed, expected);
    drop(process.stdin());
    assert_eq!(process.join().await.unwrap(), ExitStatus::Success);
    let mut resize = vec![4];
    resize.extend_from_slice(expected);
    assert_eq!(*others.lock().unwrap(), vec![resize, vec![255, 0]]);
    assert_eq!(
        server.upgrades()[0].uri,
        "/api/v1/namespaces/ns/pods/web/attach?stdin=true&stdout=true&stderr=false&tty=true"
    );
}

#[tokio::test]
async fn a_refused_upgrade_is_the_servers_status() {
    let forbidden = json!({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
        "message":"pods \"web\" is forbidden: User \"u\" cannot create resource \"pods/exec\""});
    let server = WsServer::start(Answer::Refuse(403, forbidden), |_| async {}).await;
    let err = server.pods().exec("web", ["ls"], &AttachParams::default()).await.unwrap_err();
    assert!(err.is_forbidden(), "{err:?}");
    assert!(err.to_string().contains("cannot create resource"), "{err}");
    let err = server.pods().port_forward("web", &[80]).await.unwrap_err();
    assert_eq!(err.code(), Some(403));
}

#[tokio::test]
async fn a_server_without_a_channel_protocol_is_refused() {
    let server = WsServer::start(Answer::Choose(&[]), |_| async {}).await;
    let err = server.pods().exec("web", ["ls"], &AttachParams::default()).await.unwrap_err();
    assert!(matches!(err, Error::Stream { .. }), "{err:?}");
}

#[tokio::test]
async fn bad_requests_fail_before_connecting() {
    let pods = WsServer::start(Answer::Choose(V5_V4), |_| async {}).await.pods();
    let none = AttachParams::default().stdout(false).stderr(false);
    assert!(matches!(pods.exec("web", ["ls"], &none).await, Err(Error::InvalidRequest { .. })));
    assert!(matches!(
        pods.exec("web", Vec::<String>::new(), &AttachParams::default()).await,
        Err(Error::InvalidRequest { .. })
    ));
    assert!(matches!(pods.port_forward("web", &[80, 80]).await, Err(Error::InvalidRequest { .. })));
}

#[tokio::test]
async fn dropping_the_process_closes_the_connection() {
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
    let closed_tx = Arc::new(Mutex::new(Some(closed_tx)));
    let server = WsServer::start(Answer::Choose(V5_V4), move |mut ws| {
        let closed_tx = closed_tx.clone();
        async move {
            ws.send(binary(1, b"running")).await.unwrap();
            while let Some(Ok(_)) = ws.next().await {}
            if let Some(tx) = closed_tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
        }
    })
    .await;
    let mut process = server.pods().exec("web", ["sleep", "1000"], &AttachParams::default()).await.unwrap();
    let mut stdout = process.stdout().unwrap();
    let mut first = [0; 7];
    stdout.read_exact(&mut first).await.unwrap();
    drop(process);
    tokio::time::timeout(Duration::from_secs(5), closed_rx).await.unwrap().unwrap();
    // The output ends with the stream.
    assert_eq!(read_all(stdout).await, b"");
}

/// A port-forward server for ports 80 and 81: port 80 echoes upper-cased,
/// port 81 fails with an error.
async fn port_server() -> WsServer {
    WsServer::start(Answer::Choose(&["v4.channel.k8s.io"]), |mut ws| async move {
        for channel in 0..4u8 {
            let port: u16 = if channel < 2 { 80 } else { 81 };
            ws.send(binary(channel, &port.to_le_bytes())).await.unwrap();
        }
        ws.send(binary(3, b"dial tcp 127.0.0.1:81: connection refused")).await.unwrap();
        while let Some(Ok(Message::Binary(data))) = ws.next().await {
            if data.first() == Some(&0) {
                ws.send(binary(0, &data[1..].to_ascii_uppercase())).await.unwrap();
            }
        }
    })
    .await
}

#[tokio::test]
async fn port_forward_frames_data_per_port_and_surfaces_the_error_channel() {
    let server = port_server().await;
    let mut forwarder = server.pods().port_forward("web", &[80, 81]).await.unwrap();
    assert_eq!(server.upgrades()[0].uri, "/api/v1/namespaces/ns/pods/web/portforward?ports=80&ports=81");
    assert_eq!(server.upgrades()[0].protocols, "v4.channel.k8s.io");
    let mut web = forwarder.take_stream(80).unwrap();
    assert!(forwarder.take_stream(80).is_none());
    assert!(forwarder.take_stream(82).is_none());
    let error = forwarder.take_error(81).unwrap();
    web.write_all(b"hello").await.unwrap();
    let mut answer = [0; 5];
    web.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HELLO");
    drop(web);
    drop(forwarder.take_stream(81));
    let err = forwarder.join().await.unwrap_err().to_string();
    assert!(err.contains("port 81: dial tcp 127.0.0.1:81: connection refused"), "{err}");
    assert_eq!(error.await.as_deref(), Some("dial tcp 127.0.0.1:81: connection refused"));
}

#[tokio::test]
async fn a_wrong_port_header_is_a_protocol_error() {
    let server = WsServer::start(Answer::Choose(&["v4.channel.k8s.io"]), |mut ws| async move {
        ws.send(binary(0, &8080u16.to_le_bytes())).await.unwrap();
        while let Some(Ok(_)) = ws.next().await {}
    })
    .await;
    let forwarder = server.pods().port_forward("web", &[80]).await.unwrap();
    let err = forwarder.join().await.unwrap_err().to_string();
    assert!(err.contains("starts with port 8080"), "{err}");
}

#[tokio::test]
async fn a_local_listener_opens_a_websocket_per_connection() {
    let server = port_server().await;
    let listener = server.pods().port_forward_listener("web", "127.0.0.1:0".parse().unwrap(), 80).await.unwrap();
    assert_eq!(listener.remote_port(), 80);
    let mut clients = Vec::new();
    for i in 0..5 {
        let addr = listener.local_addr();
        clients.push(tokio::spawn(async move {
            let mut tcp = TcpStream::connect(addr).await.unwrap();
            let text = format!("client {i}");
            tcp.write_all(text.as_bytes()).await.unwrap();
            let mut answer = vec![0; text.len()];
            tcp.read_exact(&mut answer).await.unwrap();
            assert_eq!(answer, text.to_uppercase().into_bytes());
        }));
    }
    for c in clients {
        c.await.unwrap();
    }
    let upgrades = server.upgrades();
    assert_eq!(upgrades.len(), 5);
    assert!(upgrades.iter().all(|u| u.uri.ends_with("/portforward?ports=80")));
}

#[tokio::test]
async fn log_stream_follows_the_log_line_by_line() {
    let server = TestServer::start(|_, _| Reply::Chunks {
        status: 200,
        chunks: vec![b"first\nsec".to_vec(), b"ond\n".to_vec(), b"last".to_vec()],
    })
    .await;
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(server.client(), "ns");
    let opts = LogOptions { follow: Some(true), tail_lines: Some(10), ..LogOptions::default() };
    let lines: Vec<bytes::Bytes> = pods.log_stream("web", &opts).await.unwrap().try_collect().await.unwrap();
    assert_eq!(lines, vec![&b"first"[..], b"second", b"last"]);
    assert_eq!(server.requests()[0].path, "/api/v1/namespaces/ns/pods/web/log?follow=true&tailLines=10");
}

#[tokio::test]
async fn proxy_requests_carry_the_path_and_no_timeout_parameter() {
    let server = TestServer::start(|_, _| Reply::text(200, "ok")).await;
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(server.client(), "ns");
    let body = pods
        .proxy(http::Method::GET, "web:8080", "/metrics/a b/")
        .unwrap()
        .param("x", "1")
        .timeout(Duration::from_secs(5))
        .bytes()
        .await
        .unwrap();
    assert_eq!(&body[..], b"ok");
    assert_eq!(server.requests()[0].path, "/api/v1/namespaces/ns/pods/web:8080/proxy/metrics/a%20b/?x=1");
    assert!(pods.proxy(http::Method::GET, "web", "../secrets").unwrap().bytes().await.is_err());
}

async fn status_then_close(mut ws: Socket) {
    ws.send(binary(3, br#"{"status":"Success"}"#)).await.unwrap();
    ws.close(None).await.unwrap();
}

#[tokio::test]
async fn the_dynamic_client_execs_too() {
    let server = WsServer::start(Answer::Choose(V5_V4), status_then_close).await;
    let client = Client::new(crate::config::Config::new(server.url.parse().unwrap())).unwrap();
    let pods =
        crate::dynamic::DynamicClient::namespaced_with(client, "ns", &crate::object::DynamicResource::of::<Pod>());
    let process = pods.exec("web", ["true"], &AttachParams::default()).await.unwrap();
    assert_eq!(process.join().await.unwrap(), ExitStatus::Success);
    assert!(server.upgrades()[0].uri.starts_with("/api/v1/namespaces/ns/pods/web/exec?command=true&"));
}

#[tokio::test]
async fn upgrades_do_not_wait_at_the_rate_limiter() {
    let server = WsServer::start(Answer::Choose(V5_V4), status_then_close).await;
    let mut config = crate::config::Config::new(server.url.parse().unwrap());
    // One request per 1000 s after the first.
    config.qps = 0.001;
    config.burst = 1;
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(Client::new(config).unwrap(), "ns");
    let params = AttachParams::default();
    for _ in 0..5 {
        let exec = pods.exec("web", ["true"], &params);
        let process = tokio::time::timeout(Duration::from_secs(5), exec).await.expect("not rate limited").unwrap();
        assert!(process.join().await.unwrap().success());
    }
}

/// Answers the first ping with the end of the stream; without pings the
/// stream never ends.
async fn end_on_ping(mut ws: Socket) {
    while let Some(Ok(message)) = ws.next().await {
        if let Message::Ping(_) = message {
            ws.send(binary(3, br#"{"status":"Success"}"#)).await.unwrap();
            ws.close(None).await.unwrap();
            return;
        }
    }
}

#[tokio::test]
async fn idle_streams_ping_the_server() {
    let server = WsServer::start(Answer::Choose(V5_V4), end_on_ping).await;
    let process = server.pods().exec("web", ["sleep", "100"], &AttachParams::default()).await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(5), process.join()).await.expect("a ping within 5 s");
    assert!(status.unwrap().success());

    let server = WsServer::start(Answer::Choose(&["v4.channel.k8s.io"]), end_on_ping).await;
    let mut forwarder = server.pods().port_forward("web", &[80]).await.unwrap();
    let _stream = forwarder.take_stream(80).unwrap();
    tokio::time::timeout(Duration::from_secs(5), forwarder.join()).await.expect("a ping within 5 s").unwrap();
}

#[tokio::test]
async fn a_connection_dropped_after_the_status_keeps_the_exit_code() {
    let server = WsServer::start(Answer::Choose(V5_V4), |mut ws| async move {
        ws.send(binary(3, &exit_code_status(42))).await.unwrap();
        // Gone without a close frame.
        drop(ws);
    })
    .await;
    let process = server.pods().exec("web", ["false"], &AttachParams::default()).await.unwrap();
    assert_eq!(process.join().await.unwrap(), ExitStatus::Code(42));

    let server = WsServer::start(Answer::Choose(V5_V4), |ws| async move { drop(ws) }).await;
    let process = server.pods().exec("web", ["false"], &AttachParams::default()).await.unwrap();
    let err = process.join().await.unwrap_err();
    assert!(matches!(err, Error::Stream { .. }), "{err:?}");
}
