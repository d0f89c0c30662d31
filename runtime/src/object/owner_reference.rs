//! `metav1.OwnerReference`, the one shape every metadata type reads and
//! writes its `ownerReferences` through.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};

use super::{GroupVersion, Object};
use crate::LeanString;

/// One of `metadata.ownerReferences` (`metav1.OwnerReference`): the object
/// that owns this one. The generated crate's `OwnerReference` (and its apply
/// configuration) convert from it with `.into()`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// The owner's `apiVersion`.
    #[serde(default, deserialize_with = "shared")]
    pub api_version: LeanString,
    /// The owner's `kind`.
    #[serde(default, deserialize_with = "shared")]
    pub kind: LeanString,
    /// The owner's name.
    #[serde(default)]
    pub name: LeanString,
    /// The owner's uid, shared with the references of the owner's other
    /// objects.
    #[serde(default, deserialize_with = "shared")]
    pub uid: LeanString,
    /// Whether the owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// Whether the owner cannot be deleted (foreground deletion) before
    /// this object is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

impl OwnerReference {
    /// The controller reference to `owner` (kube-rs's
    /// `Resource::controller_owner_ref`, what client-go's
    /// `metav1.NewControllerRef` makes): `controller` and
    /// `blockOwnerDeletion` set, `apiVersion` and `kind` from the object's
    /// type ([`Object::type_meta`]). `None` when the owner has no name or
    /// uid (it was never stored) or its type is unknown.
    pub fn controller_of<O: Object + ?Sized>(owner: &O) -> Option<Self> {
        let (api_version, kind) = owner.type_meta()?;
        let meta = owner.metadata();
        Some(OwnerReference {
            api_version: api_version.as_ref().into(),
            kind: kind.as_ref().into(),
            name: super::Metadata::name(meta)?.into(),
            uid: super::Metadata::uid(meta).filter(|uid| !uid.is_empty())?.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        })
    }

    /// Whether this reference is the managing controller's.
    pub fn is_controller(&self) -> bool {
        self.controller == Some(true)
    }

    /// Whether the reference names an object of `group` and `kind` (any
    /// version), as an owner lookup compares them.
    pub fn refers_to_kind(&self, group: &str, kind: &str) -> bool {
        self.kind == kind && GroupVersion::parse(&self.api_version).group == group
    }
}

/// A string many objects repeat (`apiVersion`, `kind`), sharing the buffer
/// of an equal one decoded recently; `null` reads as empty.
fn shared<'de, D: Deserializer<'de>>(deserializer: D) -> Result<LeanString, D::Error> {
    let text: Option<Cow<'de, str>> = Option::deserialize(deserializer)?;
    Ok(text.map(|t| crate::codec::shared(&t)).unwrap_or_default())
}
