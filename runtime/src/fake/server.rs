//! The HTTP side: each in-memory connection is served by hyper's HTTP/1
//! server; each request is recorded, offered to the reactors, then routed
//! to its verb's handler under the tracker's lock.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::Value;

use super::handlers;
use super::route::{Answer, Ctx};
use super::list;
use super::patch::{self, PatchType};
use super::reactor::{Action, Reaction};
use super::shared::Shared;
use super::route::{self, Verb};
use super::status;
use super::watch;
use crate::rest::Status;

type Body = BoxBody<Bytes, Infallible>;

/// Serves one in-memory connection until the client closes it.
pub(crate) fn serve_connection(shared: Arc<Shared>, io: tokio::io::DuplexStream) {
    let service = hyper::service::service_fn(move |request| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(handle(&shared, request).await) }
    });
    tokio::spawn(async move {
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .serve_connection(TokioIo::new(io), service);
        if let Err(e) = connection.await {
            tracing::trace!(error = %e, "fake apiserver connection ended");
        }
    });
}

fn json_response(code: u16, body: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(bytes)).boxed());
    *response.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}

fn status_response(mut st: Status) -> Response<Body> {
    if st.code == 0 {
        st.code = 500;
    }
    st.kind.get_or_insert_with(|| "Status".into());
    st.api_version.get_or_insert_with(|| "v1".into());
    let code = st.code;
    json_response(code, &serde_json::to_value(st).unwrap_or(Value::Null))
}

fn answer(result: Answer) -> Response<Body> {
    match result {
        Ok((code, body)) => json_response(code, &body),
        Err(st) => status_response(st),
    }
}

/// The request body as JSON: YAML for apply, JSON for everything else;
/// `None` when empty or unreadable.
fn parse_body(bytes: &[u8], patch_type: Option<PatchType>) -> Option<Value> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match patch_type {
        Some(PatchType::Apply) => serde_yaml_ng::from_slice(bytes).ok(),
        _ => serde_json::from_slice(bytes).ok(),
    }
}

/// `fieldManager`, else the program name the user agent starts with, as
/// the apiserver defaults it.
fn manager(request: &Request<Incoming>, query: &[(String, String)]) -> String {
    if let Some((_, m)) = query.iter().find(|(k, _)| k == "fieldManager") {
        return m.clone();
    }
    let agent = request.headers().get(http::header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    agent.split('/').next().unwrap_or_default().to_owned()
}

async fn handle(shared: &Arc<Shared>, request: Request<Incoming>) -> Response<Body> {
    let path = request.uri().path().to_owned();
    let query: Vec<(String, String)> =
        serde_urlencoded::from_str(request.uri().query().unwrap_or_default()).unwrap_or_default();
    if request.method() == Method::GET
        && let Some(body) = super::discovery::answer(&shared.tracker.lock(), &path)
    {
        return json_response(200, &body);
    }
    let info = match route::parse(request.method(), &path, &query) {
        Ok(info) => info,
        Err(st) => return status_response(st),
    };
    let patch_type = if info.verb == Verb::Patch {
        let content_type =
            request.headers().get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
        match PatchType::from_content_type(content_type) {
            Ok(t) => Some((t, content_type.to_owned())),
            Err(st) => return status_response(st),
        }
    } else {
        None
    };
    let manager = manager(&request, &query);
    let method = request.method().clone();
    let bytes = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => return status_response(status::bad_request(format!("reading the request body: {e}"))),
    };
    let body = parse_body(&bytes, patch_type.as_ref().map(|(t, _)| *t));
    if body.is_none() && !bytes.is_empty() && method != Method::DELETE {
        return status_response(status::bad_request("the request body is not valid JSON (or YAML for apply)"));
    }
    let action = Action {
        verb: info.verb.as_str().to_owned(),
        group: info.gvr.group.clone(),
        version: info.gvr.version.clone(),
        resource: info.gvr.resource.clone(),
        subresource: info.subresource.clone().unwrap_or_default(),
        namespace: info.namespace.clone().unwrap_or_default(),
        name: info.name.clone().unwrap_or_default(),
        body: body.clone(),
        patch_type: patch_type.as_ref().map(|(_, ct)| ct.clone()),
        query: query.clone(),
    };
    shared.actions.lock().push(action.clone());
    if let Some(response) = react(shared, &action).await {
        return response;
    }
    let ctx = Ctx {
        info: &info,
        query: &query,
        manager,
        dry_run: query.iter().any(|(k, v)| k == "dryRun" && v == "All"),
        seed: false,
        apply: false,
    };
    if info.verb == Verb::Watch {
        return match watch::start(shared, &ctx) {
            Ok(chunks) => watch_response(chunks),
            Err(st) => status_response(st),
        };
    }
    let result = dispatch(shared, &ctx, body, patch_type.map(|(t, _)| t), &path);
    answer(result)
}

/// Runs the verb's handler, then wakes the watches.
pub(crate) fn dispatch(
    shared: &Shared,
    ctx: &Ctx<'_>,
    body: Option<Value>,
    patch_type: Option<PatchType>,
    path: &str,
) -> Answer {
    let result = {
        let mut t = shared.tracker.lock();
        let t = &mut *t;
        match (ctx.info.verb, patch_type) {
            (Verb::Get, _) => handlers::get(t, ctx, path),
            (Verb::List, _) => list::list(t, ctx),
            (Verb::Create, _) => handlers::create(t, ctx, body, path),
            (Verb::Update, _) => handlers::update(t, ctx, body, path),
            (Verb::Patch, Some(patch_type)) => patch::patch(t, ctx, body, patch_type, path),
            (Verb::Delete, _) => handlers::delete(t, ctx, body, path),
            (Verb::DeleteCollection, _) => handlers::delete_collection(t, ctx, body, path),
            (Verb::Patch, None) | (Verb::Watch, _) => Err(status::method_not_allowed(ctx.info.verb.as_str(), path)),
        }
    };
    shared.notify();
    result
}

/// Offers the action to the reactors, newest first; the first that
/// answers wins, delays are waited out on the way.
async fn react(shared: &Shared, action: &Action) -> Option<Response<Body>> {
    let reactors: Vec<_> =
        shared.reactors.read().iter().filter(|r| r.handles(action)).map(|r| r.react.clone()).collect();
    for react in reactors {
        match react(action) {
            None => {}
            Some(Reaction::Delay(delay)) => tokio::time::sleep(delay).await,
            Some(Reaction::Error(st)) => return Some(status_response(st)),
            Some(Reaction::Respond(body)) => return Some(json_response(200, &body)),
        }
    }
    None
}

fn watch_response(chunks: tokio::sync::mpsc::Receiver<Bytes>) -> Response<Body> {
    let stream = futures_util::stream::unfold(chunks, |mut chunks| async move {
        let chunk = chunks.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(chunk)), chunks))
    });
    let mut response = Response::new(StreamBody::new(stream).boxed());
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}
