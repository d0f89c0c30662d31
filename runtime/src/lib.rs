//! Runtime for the generated Kubernetes client: the handwritten half of
//! client-go for Rust.
//!
//! The generated crate (`k8s-client`, or a crate generated from your CRDs)
//! holds the API types, the typed ClientSet, listers and informers;
//! everything they stand on lives here, independent of any particular
//! Kubernetes version. This crate never depends on a generated one:
//! generic code works on any type implementing [`object::Resource`], and
//! [`DynamicObject`](dynamic::DynamicObject) on kinds known only at run
//! time.
//!
//! # Quickstart
//! ```no_run
//! use std::time::Duration;
//! use k8s_client_runtime::cache::SharedInformerFactory;
//! use k8s_client_runtime::dynamic::DynamicObject;
//! use k8s_client_runtime::rest::ListOptions;
//! use k8s_client_runtime::{Client, DynamicResource, ErrorChain, Object as _, ResourceClient};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // KUBECONFIG, ~/.kube/config, or the pod's service account.
//! let client = Client::try_default()?;
//! // With a generated crate: `Clientset::new(client).core_v1().pods("default")`,
//! // a `ResourceClient<Pod>`. Here, the same client over a dynamic kind:
//! let pods = DynamicResource {
//!     group: String::new(),
//!     version: "v1".into(),
//!     kind: "Pod".into(),
//!     plural: "pods".into(),
//!     namespaced: true,
//! };
//! let client_pods = ResourceClient::<DynamicObject>::namespaced_with(client.clone(), "default", &pods);
//! for pod in client_pods.list(&ListOptions::default()).await?.items {
//!     println!("{}", pod.name().unwrap_or_default());
//! }
//! // Informers: `factory.core_v1().pods().lister()` with the generated prelude.
//! let factory = SharedInformerFactory::new(client, Duration::from_secs(300));
//! factory.start();
//! if let Err(e) = factory.wait_for_cache_sync_within(Duration::from_secs(60)).await {
//!     eprintln!("{}", ErrorChain(&e));
//! }
//! # Ok(()) }
//! ```
//! The repository's README walks through a whole controller (informer →
//! workqueue → workers → reconcile → events).
//!
//! # Where client-go's concepts live
//! | client-go | here |
//! |---|---|
//! | `rest.Config`, `clientcmd` (kubeconfig), `rest.InClusterConfig` | [`Config`], [`config`] |
//! | `clientcmd.ModifyConfig`, `kubectl config set-context`/`use-context` | [`config::KubeconfigFiles::modify`], `set_current_context`, `set_context_namespace` (kubectl's files, locks and bytes) |
//! | rotated certificate and CA files (`transport/cert_rotation.go`, `ClientsAllowCARotation`) | [`config::CertificateFiles`] |
//! | `rest.RESTClient` | [`rest::Client`] (raw requests: [`rest::Request`]) |
//! | `rest.WarningHandler`, `NoWarnings`, `NewWarningWriter{Deduplicate}` | [`config::WarningHandler`], [`config::NoWarnings`], [`config::LogWarnings`] (the default, deduplicated), on [`Config::warning_handler`] |
//! | Go transport's gzip, `Config.DisableCompression` | on by default ([`Config::disable_compression`]); [`rest::Body::wire_bytes`] |
//! | `tools/metrics` (`rest_client_*`), `Config.WrapTransport` | [`rest::metrics::RequestMetrics`] and `PrometheusRequestMetrics` (feature `metrics`), [`rest::ClientBuilder::layer`] (tower layers); every request in a `request` tracing span |
//! | a typed client (`gentype.Client[T]`), `kubernetes.Clientset` | [`ResourceClient<K>`](rest::ResourceClient); the generated crate's `clientset` |
//! | `dynamic.Interface`, `unstructured.Unstructured` | [`dynamic::DynamicClient`], [`dynamic::DynamicObject`] |
//! | `metadata.Interface`, `metav1.PartialObjectMetadata`, `metadatainformer.SharedInformerFactory` | [`metadata::MetadataClient`], [`metadata::PartialObjectMetadata`], [`metadata::MetadataInformerFactory`] |
//! | `discovery.DiscoveryClient`, `discovery/cached/disk` | [`discovery::DiscoveryClient`], [`discovery::DiscoveryClient::with_disk_cache`] (kubectl's cache files) |
//! | `meta.RESTMapper`, `restmapper.DeferredDiscoveryRESTMapper` (with short names and categories) | [`discovery::RestMapper`], [`discovery::RestMapping`] |
//! | `watch.Interface` | [`rest::WatchStream`] of [`rest::WatchEvent`]s |
//! | `tools/watch.NewRetryWatcher`; kube-rs's `watcher` | [`watcher::retry_watcher`]; [`watcher::watcher`] (relists on 410) |
//! | `tools/watch.Until`, `UntilWithSync`; kube-rs's `await_condition` | [`wait::until`], [`wait::until_with_sync`]; [`wait::await_condition`], [`wait::conditions`] |
//! | `informers.SharedInformerFactory` | [`cache::SharedInformerFactory`]; typed accessors from the generated prelude |
//! | `cache.SharedIndexInformer`, `ResourceEventHandlerFuncs` | [`cache::SharedIndexInformer`], [`cache::ResourceEventHandlerFuncs`], [`cache::EnqueueKeys`] |
//! | `cache.Reflector`, `RealFIFO`, `DeltaFIFO`, `ThreadSafeStore`, `Indexer` | [`cache::reflector`], [`cache::real_fifo`], [`cache::delta_fifo`], [`cache::store`] |
//! | `WaitForCacheSync` | [`cache::SharedInformerFactory::wait_for_cache_sync_within`] |
//! | informer metrics (`InformerMetricsProvider`, `WithInformerName`) | `cache::InformerMetricsProvider`, `cache::FactoryBuilder::metrics`, `cache::PrometheusInformerMetrics` (features `informers`, `metrics`) |
//! | `utilruntime.HandleCrash` in informers | [`cache::OnPanic`], [`cache::SharedIndexInformer::failure`] |
//! | listers (`DeploymentLister`) | [`cache::Lister<K>`](cache::Lister); the generated crate's `listers` |
//! | `workqueue.TypedRateLimitingInterface` | [`workqueue::RateLimitingQueue`] |
//! | `record.EventRecorder`, `EventBroadcaster` | [`record::EventRecorder`], [`record::EventBroadcaster`] |
//! | `events.EventRecorder`, `EventBroadcaster` (events.k8s.io/v1) | [`events::EventRecorder`], [`events::EventBroadcaster`] |
//! | `leaderelection.LeaderElector`, `resourcelock.LeaseLock` | [`leaderelection::LeaderElector`], [`leaderelection::LeaseLock`] |
//! | controller-runtime's builder, `Reconciler`, manager, `controllerutil`; `meta.SetStatusCondition` | `controller::Controller`, `controller::Manager`, `controller::finalizer` (feature `controller`); [`object::set_status_condition`] |
//! | `applyconfigurations`, `Extract<Kind>` | the generated crate's `<Kind>Apply` (feature `apply`), [`apply::extract`] |
//! | `strategicpatch.CreateTwoWayMergePatch`, `StrategicMergePatch` | [`strategic::two_way_patch`], [`rest::Patch::strategic_diff`], [`strategic::merge`] |
//! | `labels.Selector`, `fields.Selector` | [`selector::LabelSelector`], [`selector::FieldSelector`] |
//! | `kubernetes/fake.NewClientset()`, `PrependReactor`, `Actions()` | `fake::FakeCluster` (feature `fake`) |
//! | `metav1.Object`, `schema.GroupVersionResource` | [`Object`], [`Metadata`], [`Resource`], [`DynamicResource`] |
//!
//! Most types also carry client-go's name as a rustdoc alias: searching
//! the docs for `WaitForCacheSync` or `RESTClient` finds them.
//!
//! # Features and floors
//! The runtime is one crate whose parts are Cargo features; the client is
//! always there. Each floor uses only the floors below it, and a feature
//! adds modules on its floor (`make lint` builds every feature alone):
//!
//! | floor | modules | feature |
//! |---|---|---|
//! | 1. data, no I/O | [`object`], [`codec`], [`protobuf`], [`map`], [`selector`], [`apply`], [`strategic`] | always |
//! | 1. data, no I/O | `workqueue` | `workqueue` (and `informers`); its Prometheus metrics: `metrics` |
//! | 2. the client | [`config`], [`rest`] | always |
//! | 2. the client | `rest::remotecommand`, `rest::portforward` (exec, attach, port-forward over WebSockets) | `ws` |
//! | 2. the client | SOCKS5 proxies (`proxy-url: socks5://…`) | `socks5` |
//! | 3. on the client | [`dynamic`], [`discovery`], [`metadata`], [`watcher`], [`wait`] | always |
//! | 3. on the client | `cache` (reflectors, FIFOs, informers, listers), `metadata::MetadataInformerFactory` | `informers` |
//! | 3. on the client | `record`, `events` (the two event recorders) | `events` |
//! | 3. on the client | `leaderelection` | `leader-election` |
//! | 4. on the cache | `controller` (controllers, a manager with leader election, metrics and probes) | `controller` |
//! | 5. for tests | `fake` (an in-memory apiserver under [`rest::Client`]) | `fake` |
//!
//! The defaults are `informers`, `events`, `leader-election`, `controller`
//! and `ws`: what a controller uses. `socks5`, `metrics` and `fake` are asked for, `fake`
//! from dev-dependencies as tokio's `test-util` is. Under floor 1 lie
//! private modules the codec, the protobuf codec and the maps share:
//! `read` (text lent by the input, elements staged on the stack),
//! `raw_json` and `intern` (this thread's tables of recent strings and
//! maps); the codec uses the maps, never the other way round. The retry
//! delays of the reflector and the watcher are one private module on the
//! client's floor, `backoff` ([`watcher::BackoffConfig`], also
//! `cache::BackoffConfig`). The two
//! event recorders stand on one private module, `broadcast` (fan-out,
//! sinks, event types).
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// Items compiled only with a Cargo feature, marked so in the docs (as
/// tokio's `cfg_*!` macros do).
macro_rules! cfg_feature {
    ($feature:literal => $($item:item)*) => {
        $(
            #[cfg(feature = $feature)]
            #[cfg_attr(docsrs, doc(cfg(feature = $feature)))]
            $item
        )*
    };
}
#[allow(unused_imports)] // used only by the modules of some features
pub(crate) use cfg_feature;

pub mod apply;
mod backoff;
pub mod codec;
pub mod config;
pub mod discovery;
pub mod dynamic;
mod error_chain;
mod intern;
pub mod map;
pub mod metadata;
pub mod object;
pub mod protobuf;
mod raw_json;
mod read;
pub mod rest;
pub mod schema;
pub mod selector;
pub mod strategic;
pub mod wait;
pub mod watcher;

cfg_feature!("workqueue" => pub mod workqueue;);
cfg_feature!("informers" => pub mod cache;);
cfg_feature!("events" => pub mod events; pub mod record;);
#[cfg(feature = "events")]
mod broadcast;
cfg_feature!("leader-election" => pub mod leaderelection;);
cfg_feature!("controller" => pub mod controller;);
cfg_feature!("fake" => pub mod fake;);

#[cfg(test)]
pub(crate) mod testing;

pub use config::Config;
pub use error_chain::{ErrorChain, Report};
/// The string of generated objects' fields: 16 bytes, as a Go string (an
/// absent `Option<LeanString>` too). Up to 16 bytes of text are held inline,
/// without an allocation, which most of a Kubernetes object's strings fit
/// (namespaces, label values, enum values, IPs); a longer one is in a
/// reference-counted buffer, which a decoded string shares with an equal
/// one decoded recently ([`codec::shared`]): an image name cached in
/// thousands of pods is held once. It derefs to `str`, converts from `&str`
/// and `String` with `.into()` (and into a `String` the same way), and is
/// copied on write when shared.
pub use lean_string::LeanString;
pub use map::Map;
pub use object::{DynamicResource, GroupVersion, ListMeta, Metadata, Object, ObjectList, Resource, Scope};
pub use rest::{Client, ResourceClient};
/// The list of generated objects' fields: one pointer (an absent or empty
/// list costs 8 bytes, not a `Vec`'s 24), with its length and capacity kept
/// in the heap block beside the elements. It derefs to a slice, grows with
/// `push` as a `Vec` does, and converts from a `Vec` or an array with
/// `.into()`; [`thin_vec!`] builds one as `vec![…]` builds a `Vec`.
pub use thin_vec::ThinVec;
/// Builds a [`ThinVec`] as `vec![…]` builds a `Vec`:
/// `thin_vec![container]`, `thin_vec![0; 3]`.
pub use thin_vec::thin_vec;
