//! Every error of the crate that has a cause names its own layer only and
//! leaves the cause to `source()`, so that [`ErrorChain`] (and any other
//! printer of chains) writes each cause once. The one exception,
//! `rest::Error::Transport`, writes its causes into its message and has no
//! `source()`.

use std::error::Error;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::ErrorChain;
use crate::config::{self, Config};
use crate::rest::tests::server::{Reply, TestServer};
use crate::{discovery, dynamic, leaderelection, rest};

/// Asserts that `err` has a cause, that no cause's text is written in the
/// message of any layer above it, and that the chain still names the root
/// cause.
fn assert_names_its_own_layer_only(err: &(dyn Error + 'static)) {
    assert!(err.source().is_some(), "{err:?} lost its cause");
    let mut layer = Some(err);
    while let Some(upper) = layer {
        let text = upper.to_string();
        let mut cause = upper.source();
        while let Some(lower) = cause {
            let below = lower.to_string();
            assert!(!text.contains(&below), "{text:?} repeats its cause {below:?} ({err:?})");
            cause = lower.source();
        }
        layer = upper.source();
    }
    let mut root = err;
    while let Some(cause) = root.source() {
        root = cause;
    }
    let root = root.to_string();
    let chain = ErrorChain(err).to_string();
    assert!(chain.ends_with(&root), "{chain:?} does not end with the root cause {root:?}");
}

fn io_error() -> std::io::Error {
    std::io::Error::other("the disk is on fire")
}

fn json_error() -> serde_json::Error {
    serde_json::from_str::<u8>("\"not a number\"").unwrap_err()
}

fn config_errors() -> Vec<config::Error> {
    use base64::Engine as _;
    vec![
        config::Error::ReadKubeconfig { path: "/k/config".into(), source: io_error() },
        config::Error::ParseKubeconfig {
            path: "/k/config".into(),
            source: serde_yaml_ng::from_str::<Vec<u8>>("[1, two").unwrap_err(),
        },
        config::Error::Base64 {
            origin: "/k/config".into(),
            field: "certificate-authority-data",
            source: base64::engine::general_purpose::STANDARD.decode("!!!!").unwrap_err(),
        },
        config::Error::ReadFile { what: "token file", path: "/k/token".into(), source: io_error() },
        config::Error::Tls(rustls::Error::General("the key does not match the certificate".into())),
        config::Error::ExecSpawn { command: "kubelogin".into(), source: io_error() },
    ]
}

fn config_error() -> config::Error {
    config::Error::ReadFile { what: "token file", path: "/k/token".into(), source: io_error() }
}

fn rest_errors() -> Vec<rest::Error> {
    vec![
        rest::Error::Decode { what: "Pod".into(), source: json_error() },
        rest::Error::Auth(config_error()),
        rest::Error::Config(config_error()),
    ]
}

/// A `Transport` error for a connection refused: a port that was just free.
async fn refused() -> rest::Error {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
    config.qps = 0.0;
    rest::Client::new(config).unwrap().get("/api").bytes().await.unwrap_err()
}

/// A `Body` error: the server promises ten bytes and sends three.
async fn cut_body() -> rest::Error {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut head = [0u8; 4096];
        let _ = sock.read(&mut head).await.unwrap();
        sock.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc").await.unwrap();
    });
    let mut config = Config::new(url.parse().unwrap());
    config.qps = 0.0;
    let err = rest::Client::new(config).unwrap().get("/x").bytes().await.unwrap_err();
    server.await.unwrap();
    err
}

#[test]
fn config_errors_name_their_own_layer_only() {
    for err in config_errors() {
        assert_names_its_own_layer_only(&err);
    }
}

/// `Infer` has two causes and so no `source()`: its message names both,
/// each with its causes.
#[test]
fn infer_names_both_causes_with_theirs() {
    let err = config::Error::Infer { kubeconfig: Box::new(config_error()), in_cluster: Box::new(config_error()) };
    assert!(err.source().is_none());
    let text = err.to_string();
    assert_eq!(text.matches("reading token file /k/token: the disk is on fire").count(), 2, "{text}");
}

#[test]
fn runtime_errors_name_their_own_layer_only() {
    for err in rest_errors() {
        assert_names_its_own_layer_only(&err);
    }
    assert_names_its_own_layer_only(&dynamic::Error::Convert { kind: "Pod".into(), source: json_error() });
    assert_names_its_own_layer_only(&discovery::Error::Decode { what: "/apis".into(), source: json_error() });
    for err in rest_errors() {
        assert_names_its_own_layer_only(&discovery::Error::Rest(err));
    }
    for err in rest_errors() {
        assert_names_its_own_layer_only(&leaderelection::Error::Rest(err));
    }
    assert_names_its_own_layer_only(&discovery::MappingError::Discovery(discovery::Error::Decode {
        what: "/apis".into(),
        source: json_error(),
    }));
}

#[tokio::test]
async fn a_cut_body_names_its_own_layer_only() {
    let err = cut_body().await;
    assert!(matches!(err, rest::Error::Body(_)), "{err:?}");
    assert_names_its_own_layer_only(&err);
    assert!(err.is_probable_eof(), "{err:?}");
}

/// `Transport` writes the client's causes into its message, leaving out the
/// client's own `client error (Connect)`, and has no `source()`; whether the
/// connection broke is still read from the client's error.
#[tokio::test]
async fn transport_names_the_root_cause_and_has_no_source() {
    let err = refused().await;
    let rest::Error::Transport { error, .. } = &err else { panic!("{err:?}") };
    assert!(error.source().is_some(), "{error:?}");
    assert!(err.source().is_none(), "{err:?}");
    let text = err.to_string();
    assert!(text.to_lowercase().contains("connection refused"), "{text}");
    assert!(!text.contains(&error.to_string()), "{text} names the client's own text");
    assert_eq!(ErrorChain(&err).to_string(), text);
    assert!(!err.is_probable_eof(), "a refused connection is not a broken one: {err:?}");
    // Wrapped, the message is not repeated either.
    let wrapped = leaderelection::Error::Rest(refused().await);
    assert_names_its_own_layer_only(&wrapped);

    // A connection closed before the answer: POST is not retried.
    let server = TestServer::start(|_, _| Reply::Drop).await;
    let err = server.client().post("/x").bytes().await.unwrap_err();
    assert!(matches!(err, rest::Error::Transport { .. }), "{err:?}");
    assert!(err.is_probable_eof(), "{err:?}");
}
