//! The kinds the runtime's unit tests share: a namespaced `Pod` and a
//! cluster-scoped `Node`, with the dynamic client's [`DynamicMeta`] as
//! their metadata (the real `Metadata` of the runtime, so managed fields,
//! labels and unknown fields behave as in production). Like generated
//! kinds they know their own `apiVersion` and `kind`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

pub(crate) use crate::dynamic::DynamicMeta as Meta;
use crate::object::{Object, Resource, Scope};

/// core/v1 pods, reduced to what the tests look at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Pod {
    #[serde(default)]
    pub metadata: Meta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<serde_json::Value>,
    /// Stands for `spec.nodeName`: what index tests index by.
    #[serde(default, rename = "nodeName", skip_serializing_if = "String::is_empty")]
    pub node: String,
}

impl Resource for Pod {
    const GROUP: &'static str = "";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "v1";
    const KIND: &'static str = "Pod";
    const PLURAL: &'static str = "pods";
    const SCOPE: Scope = Scope::Namespaced;
    const LIST_KIND: &'static str = "PodList";
}

impl Object for Pod {
    type Meta = Meta;
    fn metadata(&self) -> &Meta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut Meta {
        &mut self.metadata
    }
    fn type_meta(&self) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
        static_type_meta::<Self>()
    }
}

/// A cluster-scoped kind of a named group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Node {
    #[serde(default)]
    pub metadata: Meta,
}

impl Resource for Node {
    const GROUP: &'static str = "example.io";
    const VERSION: &'static str = "v1beta1";
    const API_VERSION: &'static str = "example.io/v1beta1";
    const KIND: &'static str = "Node";
    const PLURAL: &'static str = "nodes";
    const SCOPE: Scope = Scope::Cluster;
    const LIST_KIND: &'static str = "NodeList";
}

impl Object for Node {
    type Meta = Meta;
    fn metadata(&self) -> &Meta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut Meta {
        &mut self.metadata
    }
    fn type_meta(&self) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
        static_type_meta::<Self>()
    }
}

/// What every generated kind answers to [`Object::type_meta`].
fn static_type_meta<K: Resource>() -> Option<(Cow<'static, str>, Cow<'static, str>)> {
    Some((Cow::Borrowed(K::API_VERSION), Cow::Borrowed(K::KIND)))
}

/// A pod in `namespace` (none if empty) on `node`.
pub(crate) fn pod(namespace: &str, name: &str, node: &str) -> Pod {
    Pod {
        metadata: Meta {
            name: Some(name.to_owned()),
            namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
            ..Meta::default()
        },
        node: node.to_owned(),
        ..Pod::default()
    }
}
