//! Server-side apply: what [`ResourceClient::apply`](crate::ResourceClient::apply)
//! sends, and [`extract`], client-go's `Extract<Kind>`.
//!
//! # When to use what
//! - **A generated apply configuration** (`DeploymentApply`, with the
//!   generated crate's `apply` feature): every field optional, so only what
//!   you set is sent and owned by your field manager. The right body for
//!   server-side apply; build it with `with_*` methods or a struct literal.
//! - **The kind itself** (`Deployment`): every required field is sent, empty
//!   ones included, so your manager claims them all and conflicts with
//!   whoever else owns them. Only for objects your manager owns whole.
//! - **`serde_json::Value`**: raw JSON, for what no generated type describes.
//!
//! # Read, modify, apply
//! A controller that applies only what it means to change reads the object
//! (with its managedFields: a client's `get`, not an informer's cache,
//! which drops them), extracts what its manager owns, changes that and
//! applies it back; fields it stopped setting are released, fields others
//! own are never sent:
//! ```ignore
//! let deployment = deployments.get("web").await?;
//! let mut config = DeploymentApply::extract(&deployment, "my-controller")?;
//! config = config.with_spec(DeploymentSpecApply::default().with_replicas(3));
//! deployments.apply("web", &config, &ApplyOptions::new("my-controller")).await?;
//! ```

mod extract;
pub(crate) mod fields_v1;

pub use extract::{ExtractError, extract};

use serde::Serialize;

use crate::object::Object;

/// A body [`ResourceClient<K>::apply`](crate::ResourceClient::apply)
/// accepts for kind `K`: `K`'s generated apply configuration, `K` itself,
/// or raw JSON ([`serde_json::Value`]). See the [module docs](self) for
/// when to use which.
pub trait ApplyConfiguration<K>: Serialize {}

impl<K> ApplyConfiguration<K> for serde_json::Value {}

impl<K: Object + Serialize> ApplyConfiguration<K> for K {}

/// How a value merges in server-side apply, from the schema's
/// `x-kubernetes-map-type`, `x-kubernetes-list-type` (or the patch strategy
/// it falls back to) and `x-kubernetes-preserve-unknown-fields`, as
/// structured-merge-diff reads them, and, for lists, how strategic merge
/// patch merges them (`x-kubernetes-patch-strategy`): [`extract`] needs it
/// to tell a value a manager owns whole from one it owns part by part.
///
/// Strategic merge patch merges every object key by key, whatever its
/// apply merge: only lists differ between the two, and a list that either
/// merges element by element is a [`Merge::List`].
#[derive(Clone, Copy, Debug)]
pub enum Merge {
    /// Replaced whole by apply: a scalar, or an atomic list, map or struct.
    /// Strategic merge patch replaces such a list too, but merges such an
    /// object key by key.
    Atomic,
    /// A struct merged field by field; its fields' merges.
    Struct(fn() -> &'static [(&'static str, Merge)]),
    /// A map merged key by key; how each value merges.
    Map(&'static Merge),
    /// A list that apply merges element by element (list type `set` or
    /// `map`), or strategic merge patch does (patch strategy `merge`), or
    /// both.
    List(&'static ListMerge),
    /// Preserved unknown fields: objects merged key by key, lists and
    /// scalars whole (structured-merge-diff's deduced type).
    Deduced,
    /// Merged as the wrapped value, whose strategic merge patches (each
    /// element's, for a list) list the fields they keep in `$retainKeys`
    /// (patch strategy `retainKeys`, as a Deployment's `strategy` and a pod's
    /// `volumes` have), so that [`two_way_patch`](crate::strategic::two_way_patch)
    /// creates them as apimachinery does: merged, such a patch clears the
    /// fields it does not list (switching a Deployment's strategy to
    /// `Recreate` drops its `rollingUpdate`). Server-side apply ignores it.
    /// It wraps the field's merge in its struct's [`MergeFields`]:
    /// `("strategy", Merge::RetainKeys(&Merge::Struct(..)))`.
    RetainKeys(&'static Merge),
}

/// How a [`Merge::List`] merges.
#[derive(Clone, Copy, Debug)]
pub struct ListMerge {
    /// How server-side apply merges it.
    pub apply: ListType,
    /// How strategic merge patch merges it.
    pub patch: PatchStrategy,
    /// How each element merges.
    pub element: Merge,
}

/// How server-side apply merges a list: `x-kubernetes-list-type`, else, as
/// kube-openapi's `schemaconv` reads built-in types without one, a patch
/// strategy `merge` (a set without a patch merge key, a map keyed by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListType {
    /// Replaced whole.
    Atomic,
    /// Scalar elements merged by value.
    Set,
    /// Object elements merged by the values of these key fields
    /// (`x-kubernetes-list-map-keys`).
    Map(&'static [&'static str]),
}

/// How strategic merge patch merges a list (`x-kubernetes-patch-strategy`,
/// the Go field tag `patchStrategy`). Its merge key may differ from the
/// apply keys: a container's `ports` apply by `containerPort` and
/// `protocol`, patch by `containerPort`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchStrategy {
    /// Replaced by the patch's list.
    Replace,
    /// Scalar elements merged by value (strategy `merge`, no merge key).
    MergeByValue,
    /// Object elements merged by this field (`x-kubernetes-patch-merge-key`).
    MergeByKey(&'static str),
}

impl Merge {
    /// How field or key `name` of a value merging as `self` merges, without
    /// its [`Merge::RetainKeys`] (see [`Merge::retains_keys`]).
    pub(crate) fn field(self, name: &str) -> Merge {
        self.field_as_declared(name).unwrapped()
    }

    fn field_as_declared(self, name: &str) -> Merge {
        match self {
            // A handful of entries: looked through, not searched.
            Merge::Struct(fields) => fields().iter().find(|(field, _)| *field == name).map_or(Merge::Atomic, |f| f.1),
            Merge::Map(value) => *value,
            Merge::Deduced => Merge::Deduced,
            Merge::Atomic | Merge::List(_) => Merge::Atomic,
            Merge::RetainKeys(inner) => inner.field_as_declared(name),
        }
    }

    /// Whether field `name`'s strategic merge patches carry `$retainKeys`.
    pub(crate) fn retains_keys(self, name: &str) -> bool {
        matches!(self.field_as_declared(name), Merge::RetainKeys(_))
    }

    /// `self` without its [`Merge::RetainKeys`] wrappers.
    pub(crate) fn unwrapped(self) -> Merge {
        match self {
            Merge::RetainKeys(inner) => inner.unwrapped(),
            other => other,
        }
    }

    /// How an element of a list merging as `self` merges.
    pub(crate) fn element(self) -> Merge {
        match self.unwrapped() {
            Merge::List(list) => list.element.unwrapped(),
            _ => Merge::Atomic,
        }
    }

    /// How apply merges a list merging as `self`: atomic unless a
    /// [`Merge::List`] says otherwise.
    #[cfg(feature = "fake")]
    pub(crate) fn apply_list(self) -> ListType {
        match self.unwrapped() {
            Merge::List(list) => list.apply,
            _ => ListType::Atomic,
        }
    }

    /// How strategic merge patch merges a list merging as `self`: replaced
    /// unless a [`Merge::List`] says otherwise.
    pub(crate) fn patch_list(self) -> PatchStrategy {
        match self.unwrapped() {
            Merge::List(list) => list.patch,
            _ => PatchStrategy::Replace,
        }
    }
}

/// A type's merge schema: how its fields merge. Generated (the generated
/// crate's `apply` feature) for every apply configuration, which
/// [`extract`] reads managed fields by, and for every kind, the same as its
/// apply configuration's, which
/// [`Patch::strategic_diff`](crate::rest::Patch::strategic_diff) diffs two
/// versions of the kind by.
pub trait MergeFields {
    /// The fields that do not merge atomically, sorted by JSON name; a field
    /// not listed is [`Merge::Atomic`].
    fn merge_fields() -> &'static [(&'static str, Merge)];
}

/// What a struct's apply configuration needs of a type it holds but does
/// not see the fields of (a derived struct holding another derived type,
/// or a type of the Kubernetes crate): the type's own apply configuration
/// and how it merges. Derived and generated types implement it; scalars
/// are their own apply configuration and merge atomically.
pub trait ApplyValue {
    /// The apply configuration of a value of it: `<Type>Apply` for a
    /// struct, the type itself for a scalar or an enum.
    type Apply: Serialize + serde::de::DeserializeOwned + Clone + std::fmt::Debug + PartialEq;
    /// How a value of it merges.
    const MERGE: Merge;
}

macro_rules! scalar_apply_values {
    ($($ty:ty),*) => {
        $(impl ApplyValue for $ty {
            type Apply = $ty;
            const MERGE: Merge = Merge::Atomic;
        })*
    };
}

scalar_apply_values!(String, crate::LeanString, bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl ApplyValue for serde_json::Value {
    type Apply = serde_json::Value;
    const MERGE: Merge = Merge::Deduced;
}
