//! Proxies end to end on loopback: a CONNECT proxy written here (plain and
//! inside TLS), a minimal SOCKS5 proxy and a forwarding HTTP proxy, each
//! recording what it was asked for and relaying to a loopback server: an
//! HTTPS one whose certificate is for `kubernetes.example`, or a plain-http
//! one. The client never resolves that name: the proxy does (here: maps it
//! to the server).

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use common::{pki, serve_h2, serve_tls, server_config, server_config_for};
use k8s_client_runtime::config::{Config, Kubeconfig, KubeconfigOptions, Proxy, ProxyEnv};
use k8s_client_runtime::rest::Client;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Answers `{"ok":true}` over h2 to anything, except that a request
/// carrying the proxy's credentials gets a 400: they are for the proxy only.
async fn api_server(dir: &Path) -> std::net::SocketAddr {
    serve_tls(server_config(dir, &[b"h2"]), |tls| {
        serve_h2(tls, |req| {
            let mut response =
                hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(br#"{"ok":true}"#)));
            if req.headers().contains_key("proxy-authorization") {
                *response.status_mut() = hyper::StatusCode::BAD_REQUEST;
            }
            response
        })
    })
    .await
}

type Log = Arc<Mutex<Vec<String>>>;

/// A CONNECT proxy (inside TLS when `tls` is given) that records the
/// request line and Proxy-Authorization, then relays to `upstream`.
async fn connect_proxy(upstream: std::net::SocketAddr, tls: Option<rustls::ServerConfig>, log: Log) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let acceptor = tls.map(|c| tokio_rustls::TlsAcceptor::from(Arc::new(c)));
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let (acceptor, log) = (acceptor.clone(), log.clone());
            tokio::spawn(async move {
                match acceptor {
                    Some(a) => {
                        if let Ok(tls) = a.accept(sock).await {
                            relay_connect(tls, upstream, log).await;
                        }
                    }
                    None => relay_connect(sock, upstream, log).await,
                }
            });
        }
    });
    port
}

async fn relay_connect<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut client: S,
    upstream: std::net::SocketAddr,
    log: Log,
) {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        match client.read_u8().await {
            Ok(b) => head.push(b),
            Err(_) => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let mut entry = lines.next().unwrap_or_default().to_owned();
    if let Some(auth) = lines.find_map(|l| l.strip_prefix("Proxy-Authorization: ")) {
        entry.push_str(&format!(" auth={auth}"));
    }
    log.lock().unwrap().push(entry);
    let Ok(mut server) = TcpStream::connect(upstream).await else { return };
    if client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}

/// SOCKS5 (RFC 1928), no authentication, CONNECT to a domain name only:
/// just what the client under test sends.
async fn socks5_proxy(upstream: std::net::SocketAddr, log: Log) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut greeting = [0u8; 2];
                sock.read_exact(&mut greeting).await.ok()?;
                let mut methods = vec![0u8; greeting[1] as usize];
                sock.read_exact(&mut methods).await.ok()?;
                sock.write_all(&[5, 0]).await.ok()?;
                let mut req = [0u8; 5];
                sock.read_exact(&mut req).await.ok()?;
                if req[..4] != [5, 1, 0, 3] {
                    return None;
                }
                let mut name = vec![0u8; req[4] as usize + 2];
                sock.read_exact(&mut name).await.ok()?;
                let port = u16::from_be_bytes([name[name.len() - 2], name[name.len() - 1]]);
                let host = String::from_utf8_lossy(&name[..name.len() - 2]).into_owned();
                log.lock().unwrap().push(format!("SOCKS5 {host}:{port}"));
                let mut server = TcpStream::connect(upstream).await.ok()?;
                sock.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 0]).await.ok()?;
                tokio::io::copy_bidirectional(&mut sock, &mut server).await.ok()
            });
        }
    });
    port
}

fn kubeconfig(dir: &Path, server: &str, proxy_url: Option<&str>) -> Kubeconfig {
    let ca = base64::engine::general_purpose::STANDARD.encode(std::fs::read(dir.join("ca.crt")).unwrap());
    let proxy = proxy_url.map(|p| format!("    proxy-url: {p}\n")).unwrap_or_default();
    Kubeconfig::from_yaml(&format!(
        "clusters:\n- name: c\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\n{proxy}\
         contexts: [{{name: c, context: {{cluster: c}}}}]\ncurrent-context: c\n"
    ))
    .unwrap()
}

async fn get(config: Config) -> Result<serde_json::Value, String> {
    let mut config = config;
    config.qps = 0.0;
    let client = Client::new(config).map_err(|e| e.to_string())?;
    client.get("/version").json().await.map_err(|e| format!("{e}: {:?}", std::error::Error::source(&e)))
}

#[tokio::test]
async fn kubeconfig_proxy_url_and_environment_proxies_are_used() {
    let Some(dir) = pki() else { return };
    let d = dir.path();
    let api = api_server(d).await;
    let log: Log = Arc::default();
    let plain = connect_proxy(api, None, log.clone()).await;

    // kubeconfig proxy-url (with credentials), for a name only the proxy knows.
    let kc = kubeconfig(d, "https://kubernetes.example:6443", Some(&format!("http://user:p%40ss@127.0.0.1:{plain}")));
    let config = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    assert!(!format!("{config:?}").contains("p@ss"), "proxy password in Debug");
    assert_eq!(get(config).await.unwrap()["ok"], true);
    let basic = base64::engine::general_purpose::STANDARD.encode("user:p@ss");
    assert_eq!(
        log.lock().unwrap().drain(..).collect::<Vec<_>>(),
        [format!("CONNECT kubernetes.example:6443 HTTP/1.1 auth=Basic {basic}")]
    );

    // HTTPS_PROXY from an injected environment; NO_PROXY for another name.
    let kc = kubeconfig(d, "https://kubernetes.example:6443", None);
    let mut config = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    config.proxy = Proxy::Environment(ProxyEnv {
        https_proxy: format!("127.0.0.1:{plain}"),
        no_proxy: "other.example,10.0.0.0/8".into(),
        ..Default::default()
    });
    assert_eq!(get(config).await.unwrap()["ok"], true);
    assert_eq!(log.lock().unwrap().drain(..).count(), 1);

    // Loopback servers are never proxied through the environment.
    let kc = kubeconfig(d, &format!("https://127.0.0.1:{}", api.port()), None);
    let mut config = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    config.tls_server_name = Some("kubernetes.example".into());
    config.proxy =
        Proxy::Environment(ProxyEnv { https_proxy: format!("http://127.0.0.1:{plain}"), ..Default::default() });
    assert_eq!(get(config).await.unwrap()["ok"], true);
    assert!(log.lock().unwrap().is_empty(), "loopback went through the proxy");

    // An https proxy: TLS to the proxy, then CONNECT inside it.
    let tls_proxy = connect_proxy(api, Some(server_config_for(d, "proxy", &[b"http/1.1"])), log.clone()).await;
    let kc = kubeconfig(d, "https://kubernetes.example", Some(&format!("https://127.0.0.1:{tls_proxy}")));
    let config = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    assert_eq!(get(config).await.unwrap()["ok"], true);
    assert_eq!(log.lock().unwrap().drain(..).collect::<Vec<_>>(), ["CONNECT kubernetes.example:443 HTTP/1.1"]);

    // SOCKS5, the name resolved by the proxy.
    let socks = socks5_proxy(api, log.clone()).await;
    let kc = kubeconfig(d, "https://kubernetes.example:6443", Some(&format!("socks5://127.0.0.1:{socks}")));
    let config = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    assert_socks5(get(config).await, &log);

    // Unsupported schemes are refused when loading, naming the cluster.
    let kc = kubeconfig(d, "https://kubernetes.example", Some("socks4://127.0.0.1:1"));
    let err = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap_err().to_string();
    assert!(err.contains("for cluster \"c\"") && err.contains("unsupported scheme \"socks4\""), "{err}");
}

type Incoming = hyper::Request<hyper::body::Incoming>;
type Reply = hyper::Response<http_body_util::Full<bytes::Bytes>>;

/// Serves HTTP/1.1 on `listener`, one task per connection, with `handle`.
fn serve_http1<H, F>(listener: TcpListener, handle: H)
where
    H: Fn(Incoming) -> F + Clone + Send + Sync + 'static,
    F: std::future::Future<Output = Reply> + Send + 'static,
{
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let handle = handle.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let reply = handle(req);
                    async move { Ok::<_, std::convert::Infallible>(reply.await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(sock), service)
                    .await;
            });
        }
    });
}

/// A plain-http server recording the request target and whether proxy
/// credentials reached it, answering `{"ok":true}`.
async fn plain_http_server(log: Log) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    serve_http1(listener, move |req| {
        let leaked = if req.headers().contains_key("proxy-authorization") { " with Proxy-Authorization" } else { "" };
        log.lock().unwrap().push(format!("server: {} {}{leaked}", req.method(), req.uri()));
        async { hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(br#"{"ok":true}"#))) }
    });
    addr
}

/// A forwarding HTTP proxy: records each request line (absolute-form)
/// and its Proxy-Authorization, then sends the request on to `upstream`
/// in origin-form without the proxy's credentials, as proxies do.
async fn forward_proxy(upstream: std::net::SocketAddr, log: Log) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    serve_http1(listener, move |req: Incoming| {
        let log = log.clone();
        async move {
            let mut entry = format!("proxy: {} {}", req.method(), req.uri());
            if let Some(auth) = req.headers().get("proxy-authorization") {
                entry.push_str(&format!(" auth={}", auth.to_str().unwrap()));
            }
            log.lock().unwrap().push(entry);
            let (mut parts, body) = req.into_parts();
            parts.headers.remove("proxy-authorization");
            parts.uri = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/").parse().unwrap();
            let body = http_body_util::BodyExt::collect(body).await.unwrap().to_bytes();
            let sock = TcpStream::connect(upstream).await.unwrap();
            let (mut sender, conn) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(sock)).await.unwrap();
            tokio::spawn(conn);
            let request = hyper::Request::from_parts(parts, http_body_util::Full::new(body));
            let (parts, body) = sender.send_request(request).await.unwrap().into_parts();
            let body = http_body_util::BodyExt::collect(body).await.unwrap().to_bytes();
            hyper::Response::from_parts(parts, http_body_util::Full::new(body))
        }
    });
    port
}

fn plain_kubeconfig(server: &str, proxy_url: Option<&str>) -> Kubeconfig {
    let proxy = proxy_url.map(|p| format!("    proxy-url: {p}\n")).unwrap_or_default();
    Kubeconfig::from_yaml(&format!(
        "clusters:\n- name: c\n  cluster:\n    server: {server}\n{proxy}\
         contexts: [{{name: c, context: {{cluster: c}}}}]\ncurrent-context: c\n"
    ))
    .unwrap()
}

/// A plain-http server behind an HTTP proxy gets absolute-form requests
/// sent to the proxy; each carries the proxy's credentials, as Go's
/// transport sends them, and the server never sees them.
#[tokio::test]
async fn plain_http_requests_through_an_authenticated_proxy_carry_proxy_authorization() {
    let log: Log = Arc::default();
    let server = plain_http_server(log.clone()).await;
    let proxy = forward_proxy(server, log.clone()).await;
    let basic = |creds: &str| base64::engine::general_purpose::STANDARD.encode(creds);

    // kubeconfig proxy-url, for a name only the proxy knows.
    let kc = plain_kubeconfig("http://kubernetes.example:8080", Some(&format!("http://user:p%40ss@127.0.0.1:{proxy}")));
    let mut config = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    config.qps = 0.0;
    let client = Client::new(config).unwrap();
    for _ in 0..2 {
        let v: serde_json::Value = client.get("/version").json().await.unwrap();
        assert_eq!(v["ok"], true);
    }
    let want = format!("proxy: GET http://kubernetes.example:8080/version auth=Basic {}", basic("user:p@ss"));
    assert_eq!(
        log.lock().unwrap().drain(..).collect::<Vec<_>>(),
        [want.as_str(), "server: GET /version", want.as_str(), "server: GET /version"]
    );

    // HTTP_PROXY from an injected environment, user without password.
    let mut config = Config::new("http://kubernetes.example:8080".parse().unwrap());
    config.qps = 0.0;
    config.proxy = Proxy::Environment(ProxyEnv { http_proxy: format!("user@127.0.0.1:{proxy}"), ..Default::default() });
    assert_eq!(get(config).await.unwrap()["ok"], true);
    assert_eq!(
        log.lock().unwrap().drain(..).collect::<Vec<_>>(),
        [
            format!("proxy: GET http://kubernetes.example:8080/version auth=Basic {}", basic("user:")).as_str(),
            "server: GET /version"
        ]
    );

    // No credentials, no header.
    let mut config = Config::new("http://kubernetes.example:8080".parse().unwrap());
    config.proxy = Proxy::Environment(ProxyEnv { http_proxy: format!("127.0.0.1:{proxy}"), ..Default::default() });
    assert_eq!(get(config).await.unwrap()["ok"], true);
    assert_eq!(
        log.lock().unwrap().drain(..).collect::<Vec<_>>(),
        ["proxy: GET http://kubernetes.example:8080/version", "server: GET /version"]
    );
}

/// `socks5h://` in the environment is SOCKS5 with the name resolved by the
/// proxy, as in Go's transport.
#[tokio::test]
async fn environment_socks5h_proxy_is_used() {
    let Some(dir) = pki() else { return };
    let d = dir.path();
    let api = api_server(d).await;
    let log: Log = Arc::default();
    let socks = socks5_proxy(api, log.clone()).await;
    let kc = kubeconfig(d, "https://kubernetes.example:6443", None);
    let mut config = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    config.proxy =
        Proxy::Environment(ProxyEnv { https_proxy: format!("socks5h://127.0.0.1:{socks}"), ..Default::default() });
    assert_socks5(get(config).await, &log);
}

/// A GET through the SOCKS5 proxy went through it, with the feature (on in
/// `cargo test --workspace`, through the integration crate); without it, it
/// failed saying which feature is missing, and nothing reached the proxy.
fn assert_socks5(answer: Result<serde_json::Value, String>, log: &Log) {
    if cfg!(feature = "socks5") {
        assert_eq!(answer.unwrap()["ok"], true);
        assert_eq!(log.lock().unwrap().drain(..).collect::<Vec<_>>(), ["SOCKS5 kubernetes.example:6443"]);
    } else {
        let err = answer.unwrap_err();
        assert!(err.contains("need k8s-client-runtime's `socks5` feature"), "{err}");
        assert!(log.lock().unwrap().is_empty());
    }
}

/// A proxy refusing the tunnel: the error names the proxy, password
/// redacted.
#[tokio::test]
async fn proxy_errors_do_not_show_the_password() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                while !head.ends_with(b"\r\n\r\n") {
                    let Ok(b) = sock.read_u8().await else { return };
                    head.push(b);
                }
                let _ = sock.write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n").await;
            });
        }
    });
    let kc = plain_kubeconfig("https://kubernetes.example:6443", Some(&format!("http://user:s3cr3t@127.0.0.1:{port}")));
    let config = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    let err = get(config).await.unwrap_err();
    assert!(err.contains(&format!("proxy http://user:xxxxx@127.0.0.1:{port}")) && err.contains("407"), "{err}");
    assert!(!err.contains("s3cr3t"), "{err}");
}
