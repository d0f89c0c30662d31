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
//! | rotated certificate and CA files (`transport/cert_rotation.go`, `ClientsAllowCARotation`) | [`config::CertificateFiles`] |
//! | `rest.RESTClient` | [`rest::Client`] (raw requests: [`rest::Request`]) |
//! | a typed client (`gentype.Client[T]`), `kubernetes.Clientset` | [`ResourceClient<K>`](rest::ResourceClient); the generated crate's `clientset` |
//! | `dynamic.Interface`, `unstructured.Unstructured` | [`dynamic::DynamicClient`], [`dynamic::DynamicObject`] |
//! | `metadata.Interface`, `metav1.PartialObjectMetadata`, `metadatainformer.SharedInformerFactory` | [`metadata::MetadataClient`], [`metadata::PartialObjectMetadata`], [`metadata::MetadataInformerFactory`] |
//! | `discovery.DiscoveryClient` | [`discovery::DiscoveryClient`] |
//! | `watch.Interface` | [`rest::WatchStream`] of [`rest::WatchEvent`]s |
//! | `informers.SharedInformerFactory` | [`cache::SharedInformerFactory`]; typed accessors from the generated prelude |
//! | `cache.SharedIndexInformer`, `ResourceEventHandlerFuncs` | [`cache::SharedIndexInformer`], [`cache::ResourceEventHandlerFuncs`], [`cache::EnqueueKeys`] |
//! | `cache.Reflector`, `RealFIFO`, `DeltaFIFO`, `ThreadSafeStore`, `Indexer` | [`cache::reflector`], [`cache::real_fifo`], [`cache::delta_fifo`], [`cache::store`] |
//! | `WaitForCacheSync` | [`cache::SharedInformerFactory::wait_for_cache_sync_within`] |
//! | `utilruntime.HandleCrash` in informers | [`cache::OnPanic`], [`cache::SharedIndexInformer::failure`] |
//! | listers (`DeploymentLister`) | [`cache::Lister<K>`](cache::Lister); the generated crate's `listers` |
//! | `workqueue.TypedRateLimitingInterface` | [`workqueue::RateLimitingQueue`] |
//! | `record.EventRecorder`, `EventBroadcaster` | [`record::EventRecorder`], [`record::EventBroadcaster`] |
//! | `events.EventRecorder`, `EventBroadcaster` (events.k8s.io/v1) | [`events::EventRecorder`], [`events::EventBroadcaster`] |
//! | `leaderelection.LeaderElector`, `resourcelock.LeaseLock` | [`leaderelection::LeaderElector`], [`leaderelection::LeaseLock`] |
//! | `applyconfigurations`, `Extract<Kind>` | the generated crate's `<Kind>Apply` (feature `apply`), [`apply::extract`] |
//! | `labels.Selector`, `fields.Selector` | [`selector::LabelSelector`], [`selector::FieldSelector`] |
//! | `kubernetes/fake.NewClientset()`, `PrependReactor`, `Actions()` | [`fake::FakeCluster`] |
//! | `metav1.Object`, `schema.GroupVersionResource` | [`Object`], [`Metadata`], [`Resource`], [`DynamicResource`] |
//!
//! Most types also carry client-go's name as a rustdoc alias: searching
//! the docs for `WaitForCacheSync` or `RESTClient` finds them.
//!
//! # Layering
//! Each floor only uses the floors below it:
//! 1. [`object`], [`codec`], [`map`], [`selector`], [`workqueue`], [`apply`]: no I/O.
//!    Under the codec and the maps, two private modules both use: `read`
//!    (text lent by the input, elements staged on the stack) and `intern`
//!    (this thread's tables of recent strings and maps); the codec uses the
//!    maps, never the other way round.
//! 2. [`config`], [`rest`]: talking to an apiserver.
//! 3. [`dynamic`], [`metadata`], [`discovery`], [`cache`], [`record`], [`events`], [`leaderelection`].
//! 4. [`fake`]: an in-memory apiserver under [`rest::Client`] for unit tests.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod apply;
pub mod cache;
pub mod codec;
pub mod config;
pub mod discovery;
pub mod dynamic;
mod error_chain;
pub mod events;
pub mod fake;
mod intern;
pub mod leaderelection;
pub mod map;
pub mod metadata;
pub mod object;
pub mod protobuf;
mod read;
pub mod record;
pub mod rest;
pub mod selector;
pub mod workqueue;

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
