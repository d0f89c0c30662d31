//! The kinds the runtime's unit tests share: a namespaced `Pod` and a
//! cluster-scoped `Node`, with the dynamic client's [`DynamicMeta`] as
//! their metadata (the real `Metadata` of the runtime, so managed fields,
//! labels and unknown fields behave as in production). Like generated
//! kinds they know their own `apiVersion` and `kind`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

pub(crate) use crate::dynamic::DynamicMeta as Meta;
use crate::object::{Object, Resource, Scope, metadata_field};

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

/// A cluster-scoped kind of a named group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Node {
    #[serde(default)]
    pub metadata: Meta,
}

/// Implements [`Resource`] and [`Object`] for a test kind as the generator
/// does for a generated one: `LIST_KIND` and `API_VERSION` follow from the
/// kind, group and version, and `type_meta` answers with the constants.
macro_rules! test_kind {
    ($kind:ident, group: $group:literal, version: $version:literal, plural: $plural:literal, scope: $scope:ident) => {
        impl Resource for $kind {
            const GROUP: &'static str = $group;
            const VERSION: &'static str = $version;
            const API_VERSION: &'static str = if $group.is_empty() { $version } else { concat!($group, "/", $version) };
            const KIND: &'static str = stringify!($kind);
            const PLURAL: &'static str = $plural;
            const SCOPE: Scope = Scope::$scope;
            const LIST_KIND: &'static str = concat!(stringify!($kind), "List");
        }

        impl Object for $kind {
            metadata_field!(Meta);
            fn type_meta(&self) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
                Some((Cow::Borrowed(Self::API_VERSION), Cow::Borrowed(Self::KIND)))
            }
        }

        impl crate::codec::DecodeWith for $kind {
            fn deserialize_with<'de, D: serde::Deserializer<'de>>(
                deserializer: D,
                options: crate::codec::DecodeOptions,
            ) -> Result<Self, D::Error> {
                crate::object::deserialize_then_apply(deserializer, options)
            }
        }

        crate::impl_verbs!($kind: Get, List, Watch, Create, Update, Patch, Delete, DeleteCollection);
    };
}

test_kind!(Pod, group: "", version: "v1", plural: "pods", scope: Namespaced);
test_kind!(Node, group: "example.io", version: "v1beta1", plural: "nodes", scope: Cluster);

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

/// Log lines emitted on this thread while it lives, as text (tests run on
/// a current-thread runtime, so their tasks log on this thread too).
pub(crate) struct LogCapture {
    lines: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

struct LogWriter(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl LogCapture {
    pub(crate) fn start() -> LogCapture {
        let lines = std::sync::Arc::<std::sync::Mutex<Vec<u8>>>::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_writer(move || LogWriter(writer.clone()))
            .finish();
        LogCapture { lines, _guard: tracing::subscriber::set_default(subscriber) }
    }

    /// Everything logged so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.lines.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}
