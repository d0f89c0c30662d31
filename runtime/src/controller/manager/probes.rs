//! `/metrics`, `/healthz` and `/readyz` over plain HTTP/1.1, as a pod's
//! probes and a Prometheus scrape ask for them.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use tokio_util::sync::CancellationToken;

use super::super::{Error, Metrics};
use crate::cache::SharedInformerFactory;
use crate::leaderelection::{LeaderElector, LeaseLock};

/// How long past a missed renewal a leader still counts as healthy
/// (client-go's leader-election health check is usually given 20 s).
const LEADER_TOLERANCE: Duration = Duration::from_secs(20);

pub(super) struct State {
    pub(super) factory: SharedInformerFactory,
    pub(super) metrics: Metrics,
    pub(super) elector: Option<LeaderElector<LeaseLock>>,
}

/// Binds `addr` now, so that a taken port fails the manager's build and
/// port 0 resolves before the manager runs.
pub(super) fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, Error> {
    let listener = std::net::TcpListener::bind(addr).map_err(|source| Error::Serve { addr, source })?;
    listener.set_nonblocking(true).map_err(|source| Error::Serve { addr, source })?;
    Ok(listener)
}

/// Serves until `stop` is cancelled.
pub(super) fn serve(
    listener: std::net::TcpListener,
    state: State,
    stop: CancellationToken,
) -> Result<impl Future<Output = ()> + Send + 'static, Error> {
    let addr = listener.local_addr().map_err(|source| Error::Serve { addr: ([0, 0, 0, 0], 0).into(), source })?;
    let listener = tokio::net::TcpListener::from_std(listener).map_err(|source| Error::Serve { addr, source })?;
    let state = Arc::new(state);
    tracing::info!(%addr, "serving /metrics, /healthz and /readyz");
    Ok(async move {
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!(%addr, error = %e, "accepting a metrics connection");
                        continue;
                    }
                },
                () = stop.cancelled() => return,
            };
            let state = state.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(answer(&state, &request)) }
                });
                let connection = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                tokio::select! {
                    result = connection => {
                        if let Err(e) = result {
                            tracing::debug!(error = %e, "metrics connection");
                        }
                    }
                    () = stop.cancelled() => {}
                }
            });
        }
    })
}

fn answer<B>(state: &State, request: &Request<B>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n".into());
    }
    match request.uri().path() {
        "/metrics" => {
            let mut response = text(StatusCode::OK, state.metrics.gather_text());
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            response
        }
        "/healthz" | "/livez" => probe(&health(state)),
        "/readyz" => {
            let mut checks = health(state);
            let synced = state.factory.has_synced();
            checks.push(("informers synced", synced.then_some(()).ok_or_else(|| "caches not synced".to_owned())));
            probe(&checks)
        }
        _ => text(StatusCode::NOT_FOUND, "not found\n".into()),
    }
}

type Check = (&'static str, Result<(), String>);

/// What `/healthz` checks: no informer failed for good, and a leader has
/// renewed its lease in time.
fn health(state: &State) -> Vec<Check> {
    let failures = state.factory.failures();
    let informers = if failures.is_empty() {
        Ok(())
    } else {
        let names: Vec<String> = failures
            .iter()
            .map(|n| format!("{}: {}", n.resource.plural, n.failure.as_deref().unwrap_or("failed")))
            .collect();
        Err(names.join("; "))
    };
    let mut checks = vec![("informers", informers)];
    if let Some(elector) = &state.elector {
        checks.push(("leader-election", elector.check(LEADER_TOLERANCE).map_err(|e| crate::ErrorChain(&e).to_string())));
    }
    checks
}

/// 200 with `ok` when every check passes, else 500 listing them, as the
/// Kubernetes components' `?verbose` probes write them.
fn probe(checks: &[Check]) -> Response<Full<Bytes>> {
    let mut body = String::new();
    for (name, result) in checks {
        match result {
            Ok(()) => body.push_str(&format!("[+]{name} ok\n")),
            Err(why) => body.push_str(&format!("[-]{name} failed: {why}\n")),
        }
    }
    if checks.iter().all(|(_, r)| r.is_ok()) {
        body.push_str("ok\n");
        text(StatusCode::OK, body)
    } else {
        body.push_str("check failed\n");
        text(StatusCode::INTERNAL_SERVER_ERROR, body)
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
}
