//! Which verbs a resource serves, as marker traits: a kind implements
//! [`Get`], [`List`], [`Watch`], [`Create`], [`Update`], [`Patch`],
//! [`Delete`] and [`DeleteCollection`] for exactly the verbs the apiserver
//! serves for its resource, and [`ResourceClient`](super::ResourceClient)
//! offers only those methods. Calling a verb the resource does not serve
//! (`list` on `TokenReview`, which the apiserver only creates) is then a
//! compile error rather than a `405 Method Not Allowed` at run time, as
//! client-go's typed clients have only the served verbs in their
//! interfaces.
//!
//! ```
//! # use k8s_client_runtime::dynamic::DynamicMeta;
//! # use k8s_client_runtime::object::{Object, Resource, Scope};
//! # #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
//! # struct TokenReview { metadata: DynamicMeta }
//! # impl Resource for TokenReview {
//! #     const GROUP: &'static str = "authentication.k8s.io";
//! #     const VERSION: &'static str = "v1";
//! #     const API_VERSION: &'static str = "authentication.k8s.io/v1";
//! #     const KIND: &'static str = "TokenReview";
//! #     const PLURAL: &'static str = "tokenreviews";
//! #     const SCOPE: Scope = Scope::Cluster;
//! #     const LIST_KIND: &'static str = "TokenReviewList";
//! # }
//! # impl Object for TokenReview {
//! #     type Meta = DynamicMeta;
//! #     fn metadata(&self) -> &DynamicMeta { &self.metadata }
//! #     fn metadata_mut(&mut self) -> &mut DynamicMeta { &mut self.metadata }
//! # }
//! # impl k8s_client_runtime::codec::DecodeWith for TokenReview {
//! #     fn deserialize_with<'de, D: serde::Deserializer<'de>>(
//! #         d: D,
//! #         options: k8s_client_runtime::codec::DecodeOptions,
//! #     ) -> Result<Self, D::Error> {
//! #         k8s_client_runtime::object::deserialize_then_apply(d, options)
//! #     }
//! # }
//! k8s_client_runtime::impl_verbs!(TokenReview: Create);
//!
//! async fn review(reviews: k8s_client_runtime::rest::ResourceClient<TokenReview>) {
//!     let _ = reviews.create(&TokenReview::default(), &Default::default()).await;
//! }
//! ```
//! ```compile_fail,E0599
//! # use k8s_client_runtime::dynamic::DynamicMeta;
//! # use k8s_client_runtime::object::{Object, Resource, Scope};
//! # #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
//! # struct TokenReview { metadata: DynamicMeta }
//! # impl Resource for TokenReview {
//! #     const GROUP: &'static str = "authentication.k8s.io";
//! #     const VERSION: &'static str = "v1";
//! #     const API_VERSION: &'static str = "authentication.k8s.io/v1";
//! #     const KIND: &'static str = "TokenReview";
//! #     const PLURAL: &'static str = "tokenreviews";
//! #     const SCOPE: Scope = Scope::Cluster;
//! #     const LIST_KIND: &'static str = "TokenReviewList";
//! # }
//! # impl Object for TokenReview {
//! #     type Meta = DynamicMeta;
//! #     fn metadata(&self) -> &DynamicMeta { &self.metadata }
//! #     fn metadata_mut(&mut self) -> &mut DynamicMeta { &mut self.metadata }
//! # }
//! # impl k8s_client_runtime::codec::DecodeWith for TokenReview {
//! #     fn deserialize_with<'de, D: serde::Deserializer<'de>>(
//! #         d: D,
//! #         options: k8s_client_runtime::codec::DecodeOptions,
//! #     ) -> Result<Self, D::Error> {
//! #         k8s_client_runtime::object::deserialize_then_apply(d, options)
//! #     }
//! # }
//! k8s_client_runtime::impl_verbs!(TokenReview: Create);
//!
//! async fn review(reviews: k8s_client_runtime::rest::ResourceClient<TokenReview>) {
//!     // error[E0599]: `TokenReview: verbs::List` is not satisfied
//!     let _ = reviews.list(&Default::default()).await;
//! }
//! ```
//!
//! The generated crates implement these for their kinds (hand-written
//! kinds can use [`impl_verbs!`](crate::impl_verbs)); a run-time object
//! ([`DynamicObject`](crate::dynamic::DynamicObject)) has every verb, since
//! what its resource serves is known only to the server.

use super::ClientObject;

/// `get`: read one object by name.
pub trait Get: ClientObject {}
/// `list`: read a collection.
pub trait List: ClientObject {}
/// `watch`: follow a collection's changes. Informers need [`List`] and
/// [`Watch`].
pub trait Watch: ClientObject {}
/// `create`: create an object.
pub trait Create: ClientObject {}
/// `update`: replace an object.
pub trait Update: ClientObject {}
/// `patch`: patch an object, server-side apply included.
pub trait Patch: ClientObject {}
/// `delete`: delete an object by name.
pub trait Delete: ClientObject {}
/// `deletecollection`: delete a collection.
pub trait DeleteCollection: ClientObject {}

/// Implements verb markers for a hand-written kind:
/// `impl_verbs!(Pod: Get, List, Watch, Create, Update, Patch, Delete, DeleteCollection);`
#[macro_export]
macro_rules! impl_verbs {
    ($kind:ty: $($verb:ident),* $(,)?) => {
        $(impl $crate::rest::verbs::$verb for $kind {})*
    };
}

/// Every verb: a bound for code generic over kinds with full CRUD
/// (`fn sync<K: verbs::All>(client: ResourceClient<K>)`).
pub trait All: Get + List + Watch + Create + Update + Patch + Delete + DeleteCollection {}

impl<K: Get + List + Watch + Create + Update + Patch + Delete + DeleteCollection> All for K {}
