//! An aggregated API server that answers JSON to requests asking for
//! protobuf first, reached through the real kube-apiserver's aggregator:
//! the generated client of a built-in kind still gets, lists (page by
//! page), watches and runs an informer, decoding each answer by its
//! `Content-Type`.
//!
//! The testenv here is private and leaves `coordination.k8s.io/v1alpha2`
//! unserved (`--runtime-config`), so an APIService can hand that built-in
//! group/version, whose generated `LeaseCandidate` client negotiates
//! protobuf, to a backend in this process. The backend serves HTTPS on
//! 127.0.0.1 with the testenv's serving certificate, answers everything as
//! `application/json` whatever the `Accept`, and records each request's
//! `Accept`. The aggregator finds it as it resolves services
//! (`ResolveCluster` in k8s.io/apiserver): a Service of type ExternalName
//! `127.0.0.1` is dialled at `https://127.0.0.1:<APIService port>`, and
//! the availability check skips the endpoints of such a Service and only
//! calls the backend's discovery. The APIService skips TLS verification:
//! the aggregator would check the certificate for
//! `<service>.<namespace>.svc`, a name the testenv's certificate lacks.

mod support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::convert::Infallible;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{StreamExt as _, stream};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, Full, StreamBody};
use hyper::body::Frame;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use k8s_client::api::coordination::v1alpha2::{LeaseCandidate, LeaseCandidateSpec};
use k8s_client::api::core::v1::{Service, ServiceSpec};
use k8s_client::clientset::Clientset;
use k8s_client::kube_aggregator::pkg::apis::apiregistration::v1::{APIService, APIServiceSpec, ServiceReference};
use k8s_client::prelude::*;
use k8s_client_runtime::cache::SharedInformerFactory;
use k8s_client_runtime::codec::Timestamp;
use k8s_client_runtime::object::Resource;
use k8s_client_runtime::rest::{Client, ContentType, CreateOptions, GetOptions, ListOptions, WatchEvent};
use k8s_client_testenv::TestEnv;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

const GROUP: &str = "coordination.k8s.io";
const VERSION: &str = "v1alpha2";
/// What a client that negotiates protobuf sends (client-go's clientset).
const ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf,application/json";

/// The private testenv with the backend registered as
/// `v1alpha2.coordination.k8s.io` and available; shared by this file's
/// tests, which keep to namespaces of their own on the backend.
struct Aggregated {
    env: TestEnv,
    backend: Backend,
}

fn aggregated() -> &'static Aggregated {
    static AGGREGATED: OnceLock<Aggregated> = OnceLock::new();
    AGGREGATED.get_or_init(|| {
        let t0 = Instant::now();
        let env =
            TestEnv::start_with_args(&[&format!("--runtime-config=api/all=true,{GROUP}/{VERSION}=false"), "--no-node"]);
        let config = support::config_for(&env, None);
        let pki = env.state_dir().join("pki");
        let service_namespace = env.create_namespace("aggregated-backend");
        // The backend outlives any one test's runtime: it runs on a thread
        // of its own until the test binary exits.
        let (ready, backend) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().expect("backend runtime");
            runtime.block_on(async move {
                let backend = Backend::start(&pki).await;
                let client = Client::new(config).expect("client");
                register(&client, &service_namespace, backend.port).await;
                ready.send(backend).expect("the test waits");
                std::future::pending::<()>().await;
            });
        });
        let backend = backend.recv().expect("the backend starts and becomes available");
        eprintln!(
            "testenv ready in {:?}, aggregated API available {:?} after the start",
            env.startup_time(),
            t0.elapsed()
        );
        Aggregated { env, backend }
    })
}

fn clientset(env: &TestEnv) -> Clientset {
    Clientset::new(Client::new(support::config_for(env, None)).expect("client"))
}

/// Registers the backend listening on `port` as the aggregated API
/// `v1alpha2.coordination.k8s.io` and waits until the aggregator proxies
/// to it.
async fn register(client: &Client, namespace: &str, port: u16) {
    let clientset = Clientset::new(client.clone());
    let service = Service {
        metadata: ObjectMeta { name: Some("lease-candidates".into()), ..Default::default() },
        spec: Some(ServiceSpec {
            type_: Some("ExternalName".into()),
            external_name: Some("127.0.0.1".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    clientset.core_v1().services(namespace).create(&service, &CreateOptions::default()).await.expect("service");
    let name = format!("{VERSION}.{GROUP}");
    let api_service = APIService {
        metadata: ObjectMeta { name: Some(name.as_str().into()), ..Default::default() },
        spec: Some(APIServiceSpec {
            group: Some(GROUP.into()),
            version: Some(VERSION.into()),
            service: Some(Box::new(ServiceReference {
                namespace: Some(namespace.into()),
                name: Some("lease-candidates".into()),
                port: Some(i32::from(port)),
            })),
            insecure_skip_tls_verify: Some(true),
            group_priority_minimum: 1000,
            version_priority: 5,
            ca_bundle: None,
        }),
        status: None,
    };
    let api_services = clientset.apiregistration_v1().api_services();
    api_services.create(&api_service, &CreateOptions::default()).await.expect("APIService");

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let current = api_services.get(&name, &GetOptions::default()).await.expect("APIService");
        let conditions = current.status.and_then(|s| s.conditions).unwrap_or_default();
        if conditions.iter().any(|c| c.type_ == "Available" && c.status == "True") {
            break;
        }
        assert!(Instant::now() < deadline, "APIService {name} not Available within 60 s: {conditions:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The proxy learns of the availability from its own informer, a moment
    // after the condition is written.
    let discovery = format!("/apis/{GROUP}/{VERSION}");
    loop {
        match client.get(discovery.as_str()).bytes().await {
            Ok(_) => return,
            Err(e) => assert!(Instant::now() < deadline, "{discovery} not proxied within 60 s: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// 2027-01-15T08:00:00Z plus `nanos`.
fn at(nanos: i32) -> Timestamp {
    Timestamp::new(1_800_000_000, nanos).expect("a valid time")
}

/// A LeaseCandidate, and the JSON a Go apiserver writes for it.
fn candidate(namespace: &str, name: &str, resource_version: u64, binary_version: &str) -> (LeaseCandidate, Value) {
    let uid = format!("uid-{namespace}-{name}");
    let typed = LeaseCandidate {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            uid: Some(uid.as_str().into()),
            resource_version: Some(resource_version.to_string().into()),
            creation_timestamp: Some(Time::new(at(0))),
            labels: Some(Map::from([("app", "aggregated")])),
            ..Default::default()
        },
        spec: LeaseCandidateSpec {
            lease_name: "controller".into(),
            binary_version: binary_version.into(),
            emulation_version: Some("1.35.0".into()),
            strategy: "OldestEmulationVersion".into(),
            renew_time: Some(MicroTime::new(at(123_456_000))),
            ping_time: None,
        },
    };
    let json = json!({
        "kind": "LeaseCandidate",
        "apiVersion": format!("{GROUP}/{VERSION}"),
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": resource_version.to_string(),
            "creationTimestamp": "2027-01-15T08:00:00Z",
            "labels": {"app": "aggregated"},
        },
        "spec": {
            "leaseName": "controller",
            "renewTime": "2027-01-15T08:00:00.123456Z",
            "binaryVersion": binary_version,
            "emulationVersion": "1.35.0",
            "strategy": "OldestEmulationVersion",
        },
    });
    (typed, json)
}

/// Asserts that every request for LeaseCandidates in `namespace` the
/// backend saw came through the aggregator (as the test's user) asking for
/// protobuf first, and returns their paths with queries.
fn assert_asked_for_protobuf(backend: &Backend, namespace: &str) -> Vec<String> {
    let prefix = format!("/apis/{GROUP}/{VERSION}/namespaces/{namespace}/leasecandidates");
    let seen: Vec<Seen> = backend.requests().into_iter().filter(|r| r.path.starts_with(&prefix)).collect();
    assert!(!seen.is_empty(), "the backend saw no request under {prefix}");
    for request in &seen {
        assert_eq!(request.accept, ACCEPT_PROTOBUF, "Accept of {}?{}", request.path, request.query);
        assert_eq!(request.user, "admin", "the aggregator names the user of {}", request.path);
    }
    seen.into_iter().map(|r| format!("{}?{}", r.path, r.query)).collect()
}

#[tokio::test]
async fn typed_get_and_paged_list_decode_json_answers_to_protobuf_requests() {
    let Aggregated { env, backend } = aggregated();
    let ns = "get-list";
    let (a, a_json) = candidate(ns, "a", 11, "1.35.0");
    let (b, b_json) = candidate(ns, "b", 12, "1.35.1");
    let (c, c_json) = candidate(ns, "c", 13, "1.35.2");
    for object in [a_json, b_json, c_json] {
        backend.put(object);
    }
    assert!(LeaseCandidate::PROTOBUF.is_some(), "the generated kind speaks protobuf");
    let candidates = clientset(env).coordination_v1alpha2().lease_candidates(ns);
    assert_eq!(candidates.content_type(), ContentType::Protobuf, "the client must ask for protobuf");

    let got = candidates.get("b", &GetOptions::default()).await.expect("get");
    assert_eq!(got, b);
    // An error comes back as a JSON Status, understood as well.
    let missing = candidates.get("missing", &GetOptions::default()).await.expect_err("no such object");
    assert!(missing.is_not_found(), "{missing}");

    let page = candidates.list(&ListOptions { limit: Some(2), ..Default::default() }).await.expect("list");
    assert_eq!(page.items, [a.clone(), b.clone()]);
    assert_eq!(page.metadata.continue_.as_deref(), Some("2"));
    let all = candidates.list_all(&ListOptions { limit: Some(2), ..Default::default() }).await.expect("list_all");
    assert_eq!(all.items, [a, b, c]);
    assert_eq!(all.metadata.resource_version.as_deref(), Some("13"));

    let requests = assert_asked_for_protobuf(backend, ns);
    assert!(requests.iter().any(|r| r.contains("continue=2")), "list_all followed the continue token: {requests:?}");
}

#[tokio::test]
async fn a_typed_watch_decodes_a_json_stream_answering_a_protobuf_request() {
    let Aggregated { env, backend } = aggregated();
    let ns = "watch";
    let (_, a_json) = candidate(ns, "a", 21, "1.35.0");
    backend.put(a_json);
    let candidates = clientset(env).coordination_v1alpha2().lease_candidates(ns);
    assert_eq!(candidates.content_type(), ContentType::Protobuf);

    let options = ListOptions { resource_version: Some("21".into()), ..Default::default() };
    let mut watch = candidates.watch(&options).await.expect("watch");
    // The backend subscribed the watch before answering, so these reach it.
    let (b, b_json) = candidate(ns, "b", 22, "1.35.0");
    let (a2, a2_json) = candidate(ns, "a", 23, "1.35.1");
    backend.put(b_json);
    backend.put(a2_json);
    let mut events = Vec::new();
    while events.len() < 2 {
        let next = tokio::time::timeout(Duration::from_secs(30), watch.next()).await;
        let event = next.expect("an event within 30 s").expect("the stream stays open").expect("an event");
        events.push(event);
    }
    assert!(matches!(&events[0], WatchEvent::Added(o) if *o == b), "{:?}", events[0]);
    assert!(matches!(&events[1], WatchEvent::Modified(o) if *o == a2), "{:?}", events[1]);
    // The stream is still open: nothing more, and no error.
    let quiet = tokio::time::timeout(Duration::from_millis(300), watch.next()).await;
    assert!(quiet.is_err(), "the watch ended or sent more: {quiet:?}");

    let requests = assert_asked_for_protobuf(backend, ns);
    assert!(requests.iter().any(|r| r.contains("watch=true")), "{requests:?}");
}

/// Runs an informer of LeaseCandidates in `ns` against the backend: it
/// syncs the objects there and follows two changes made after the sync.
/// Returns the requests it made (paths with queries).
async fn informer_syncs_and_follows(env: &TestEnv, backend: &Backend, ns: &str) -> Vec<String> {
    let (a, a_json) = candidate(ns, "a", 31, "1.35.0");
    let (b, b_json) = candidate(ns, "b", 32, "1.35.0");
    backend.put(a_json);
    backend.put(b_json);

    let client = Client::new(support::config_for(env, None)).expect("client");
    let factory = SharedInformerFactory::builder(client).namespace(ns).build();
    let lister = factory.coordination_v1alpha2().lease_candidates().lister();
    factory.start();
    factory.wait_for_cache_sync_within(Duration::from_secs(30)).await.expect("the informer syncs");
    let cached = |name: &str| lister.namespace(ns).get(name).ok().map(|o| (*o).clone());
    assert_eq!((cached("a"), cached("b")), (Some(a), Some(b.clone())));

    // Changes after the sync come through the JSON watch stream.
    let (a2, a2_json) = candidate(ns, "a", 33, "1.35.1");
    let (c, c_json) = candidate(ns, "c", 34, "1.35.0");
    backend.put(a2_json);
    backend.put(c_json);
    let deadline = Instant::now() + Duration::from_secs(30);
    while (cached("a"), cached("c")) != (Some(a2.clone()), Some(c.clone())) {
        assert!(Instant::now() < deadline, "the cache did not follow: a {:?}, c {:?}", cached("a"), cached("c"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(cached("b"), Some(b));
    factory.shutdown();
    assert_asked_for_protobuf(backend, ns)
}

#[tokio::test]
async fn an_informer_syncs_from_a_json_watch_list_and_follows_it() {
    let Aggregated { env, backend } = aggregated();
    let requests = informer_syncs_and_follows(env, backend, "informer-watch-list").await;
    // One stream did it all: the reflector's first choice, which this
    // backend serves.
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(requests[0].contains("sendInitialEvents=true"), "{requests:?}");
}

#[tokio::test]
async fn an_informer_lists_and_watches_json_when_the_aggregated_api_refuses_watch_list() {
    let Aggregated { env, backend } = aggregated();
    let ns = "informer-list-watch";
    backend.refuse_watch_list(ns);
    let requests = informer_syncs_and_follows(env, backend, ns).await;
    let refused = requests.iter().position(|r| r.contains("sendInitialEvents=true"));
    let listed = requests.iter().position(|r| !r.contains("watch=true") && r.contains("limit=500"));
    let watched = requests.iter().position(|r| r.contains("watch=true") && !r.contains("sendInitialEvents"));
    assert!(
        matches!((refused, listed, watched), (Some(r), Some(l), Some(w)) if r < l && l < w),
        "watch-list refused, then a paged list and a watch: {requests:?}"
    );
}

/// One request as the backend saw it.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    query: String,
    accept: String,
    /// `X-Remote-User`: the user the aggregator proxies for.
    user: String,
}

/// The JSON-only aggregated API server: LeaseCandidates in memory, keyed
/// by namespace and name; every answer `application/json`.
#[derive(Clone)]
struct Backend {
    port: u16,
    state: Arc<BackendState>,
}

struct BackendState {
    objects: Mutex<BTreeMap<(String, String), Value>>,
    requests: Mutex<Vec<Seen>>,
    /// Watch events as (namespace, JSON line), to every open watch.
    events: broadcast::Sender<(String, Bytes)>,
    /// Namespaces whose watches refuse `sendInitialEvents`, as a server
    /// without the WatchList feature does.
    watch_list_refused: Mutex<HashSet<String>>,
}

type Body = UnsyncBoxBody<Bytes, Infallible>;

impl Backend {
    async fn start(pki: &Path) -> Backend {
        let certs = CertificateDer::pem_file_iter(pki.join("serving.crt"))
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .expect("the testenv's serving certificate");
        let key = PrivateKeyDer::from_pem_file(pki.join("serving.key")).expect("the testenv's serving key");
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .and_then(|builder| builder.with_no_client_auth().with_single_cert(certs, key))
            .expect("TLS configuration");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let state = Arc::new(BackendState {
            objects: Mutex::new(BTreeMap::new()),
            requests: Mutex::new(Vec::new()),
            events: broadcast::channel(64).0,
            watch_list_refused: Mutex::new(HashSet::new()),
        });
        let serving = Arc::clone(&state);
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                let (acceptor, state) = (acceptor.clone(), Arc::clone(&serving));
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let service = hyper::service::service_fn(move |request| {
                        let response = state.handle(&request);
                        async move { Ok::<_, Infallible>(response) }
                    });
                    let _ =
                        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
                });
            }
        });
        Backend { port, state }
    }

    /// Stores `object` (a LeaseCandidate's JSON) and sends it to the open
    /// watches of its namespace: ADDED when new, MODIFIED otherwise.
    fn put(&self, object: Value) {
        let namespace = object["metadata"]["namespace"].as_str().expect("a namespace").to_owned();
        let name = object["metadata"]["name"].as_str().expect("a name").to_owned();
        let line = {
            let mut objects = self.state.objects.lock().unwrap();
            let kind = if objects.contains_key(&(namespace.clone(), name.clone())) { "MODIFIED" } else { "ADDED" };
            let line = event_line(kind, &object);
            objects.insert((namespace.clone(), name), object);
            line
        };
        // No open watch is no error.
        let _ = self.state.events.send((namespace, line));
    }

    /// Makes watches in `namespace` answer `sendInitialEvents` with 422
    /// Invalid.
    fn refuse_watch_list(&self, namespace: &str) {
        self.state.watch_list_refused.lock().unwrap().insert(namespace.to_owned());
    }

    fn requests(&self) -> Vec<Seen> {
        self.state.requests.lock().unwrap().clone()
    }
}

impl BackendState {
    fn handle(&self, request: &Request<hyper::body::Incoming>) -> Response<Body> {
        let header = |name: &str| {
            request.headers().get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()).unwrap_or_default()
        };
        let path = request.uri().path();
        let query = request.uri().query().unwrap_or_default();
        self.requests.lock().unwrap().push(Seen {
            path: path.to_owned(),
            query: query.to_owned(),
            accept: header("accept"),
            user: header("x-remote-user"),
        });
        let params: HashMap<&str, &str> = query.split('&').filter_map(|pair| pair.split_once('=')).collect();
        let Some(rest) = path.strip_prefix(&format!("/apis/{GROUP}/{VERSION}")) else {
            // `/apis` too: the aggregator then falls back to this
            // version's own discovery document.
            return status_response(StatusCode::NOT_FOUND, "NotFound", &format!("{path} not found"));
        };
        let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        match segments.as_slice() {
            [] => json_response(StatusCode::OK, &discovery()),
            ["namespaces", namespace, "leasecandidates"] if matches!(params.get("watch"), Some(&("true" | "1"))) => {
                self.watch(namespace, params.get("sendInitialEvents") == Some(&"true"))
            }
            ["namespaces", namespace, "leasecandidates"] => self.list(namespace, &params),
            ["namespaces", namespace, "leasecandidates", name] => {
                let object = self.objects.lock().unwrap().get(&(namespace.to_string(), name.to_string())).cloned();
                match object {
                    Some(object) => json_response(StatusCode::OK, &object),
                    None => status_response(
                        StatusCode::NOT_FOUND,
                        "NotFound",
                        &format!("leasecandidates.{GROUP} \"{name}\" not found"),
                    ),
                }
            }
            _ => status_response(StatusCode::NOT_FOUND, "NotFound", &format!("{path} not found")),
        }
    }

    /// The objects of `namespace` by name, and their highest
    /// resourceVersion: each test's namespace has versions of its own, so
    /// what one test expects does not depend on the others.
    fn snapshot(&self, namespace: &str) -> (Vec<Value>, String) {
        let objects = self.objects.lock().unwrap();
        let items: Vec<Value> = objects.iter().filter(|((ns, _), _)| ns == namespace).map(|(_, o)| o.clone()).collect();
        let latest = items
            .iter()
            .filter_map(|o| o["metadata"]["resourceVersion"].as_str()?.parse::<u64>().ok())
            .max()
            .unwrap_or(1);
        (items, latest.to_string())
    }

    /// A page from the index in `continue` (the token this server hands
    /// out), `limit` long.
    fn list(&self, namespace: &str, params: &HashMap<&str, &str>) -> Response<Body> {
        let (mut items, resource_version) = self.snapshot(namespace);
        let start = params.get("continue").and_then(|c| c.parse().ok()).unwrap_or(0).min(items.len());
        let end = params
            .get("limit")
            .and_then(|l| l.parse::<usize>().ok())
            .map_or(items.len(), |l| (start + l).min(items.len()));
        let more = end < items.len();
        items.truncate(end);
        let mut page: Vec<Value> = items.split_off(start);
        // A Go apiserver leaves the items' kind and apiVersion out.
        for item in &mut page {
            if let Some(fields) = item.as_object_mut() {
                fields.remove("kind");
                fields.remove("apiVersion");
            }
        }
        let mut metadata = json!({"resourceVersion": resource_version});
        if more {
            metadata["continue"] = json!(end.to_string());
        }
        json_response(
            StatusCode::OK,
            &json!({"kind": "LeaseCandidateList", "apiVersion": format!("{GROUP}/{VERSION}"), "metadata": metadata, "items": page}),
        )
    }

    /// A watch that stays open: with `sendInitialEvents`, the current
    /// objects and the bookmark ending them first, then every later change.
    fn watch(&self, namespace: &str, send_initial_events: bool) -> Response<Body> {
        if send_initial_events && self.watch_list_refused.lock().unwrap().contains(namespace) {
            return status_response(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid",
                "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            );
        }
        // Subscribed before the snapshot, so no change falls between them.
        let changes = self.events.subscribe();
        let mut initial = Vec::new();
        if send_initial_events {
            let (items, resource_version) = self.snapshot(namespace);
            initial.extend(items.iter().map(|item| event_line("ADDED", item)));
            let end = json!({
                "kind": "LeaseCandidate",
                "apiVersion": format!("{GROUP}/{VERSION}"),
                "metadata": {
                    "resourceVersion": resource_version,
                    "annotations": {"k8s.io/initial-events-end": "true"},
                },
            });
            initial.push(event_line("BOOKMARK", &end));
        }
        let later = stream::unfold((changes, namespace.to_owned()), |(mut changes, namespace)| async move {
            loop {
                match changes.recv().await {
                    Ok((of, line)) if of == namespace => return Some((line, (changes, namespace))),
                    Ok(_) => {}
                    // Lagging behind ends the watch, as an apiserver's does.
                    Err(_) => return None,
                }
            }
        });
        let frames = stream::iter(initial).chain(later).map(|line| Ok::<_, Infallible>(Frame::data(line)));
        Response::builder()
            .header("Content-Type", "application/json")
            .body(StreamBody::new(frames).boxed_unsync())
            .expect("a valid response")
    }
}

/// The APIResourceList of `coordination.k8s.io/v1alpha2`, which the
/// aggregator's availability check and discovery read.
fn discovery() -> Value {
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": format!("{GROUP}/{VERSION}"),
        "resources": [{
            "name": "leasecandidates",
            "singularName": "leasecandidate",
            "namespaced": true,
            "kind": "LeaseCandidate",
            "verbs": ["get", "list", "watch"],
        }],
    })
}

fn event_line(kind: &str, object: &Value) -> Bytes {
    let mut line = serde_json::to_vec(&json!({"type": kind, "object": object})).expect("JSON");
    line.push(b'\n');
    Bytes::from(line)
}

fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("Content-Type", "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(body).expect("JSON"))).boxed_unsync())
        .expect("a valid response")
}

fn status_response(status: StatusCode, reason: &str, message: &str) -> Response<Body> {
    json_response(
        status,
        &json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": status.as_u16(),
        }),
    )
}
