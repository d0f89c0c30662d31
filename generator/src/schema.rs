//! The input model: the parts of an OpenAPI v3 document, and of a CRD's
//! `openAPIV3Schema`, that the generator reads.
//!
//! One JSON Schema model serves both inputs, since a CRD's schema is what
//! the apiserver publishes for it: a manifest is turned into the document
//! the apiserver would serve ([`crate::crd`]), a live cluster hands over
//! its documents ([`crate::cluster`]), and both go through the same
//! [`crate::lower`] into one IR. The model is lenient: unknown keywords are
//! ignored, values of `enum` and `default` are kept as JSON, and a node of
//! the wrong type is an error naming its JSON pointer.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// A JSON Schema node as Kubernetes uses it: OpenAPI v3's schema object,
/// which is also apiextensions' `JSONSchemaProps`, with the
/// `x-kubernetes-*` extensions.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Schema {
    /// `#/components/schemas/<name>`.
    #[serde(rename = "$ref")]
    pub reference: Option<String>,
    #[serde(rename = "type")]
    pub ty: Option<String>,
    pub format: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub properties: BTreeMap<String, Schema>,
    #[serde(default)]
    pub required: Vec<String>,
    pub items: Option<Box<Schema>>,
    pub additional_properties: Option<AdditionalProperties>,
    #[serde(rename = "enum")]
    pub enum_values: Option<Vec<Value>>,
    pub default: Option<Value>,
    #[serde(default)]
    pub nullable: bool,
    #[serde(default)]
    pub all_of: Vec<Schema>,
    #[serde(default)]
    pub any_of: Vec<Schema>,
    #[serde(default)]
    pub one_of: Vec<Schema>,
    pub not: Option<Box<Schema>>,
    #[serde(rename = "x-kubernetes-int-or-string", default)]
    pub int_or_string: bool,
    #[serde(rename = "x-kubernetes-preserve-unknown-fields")]
    pub preserve_unknown_fields: Option<bool>,
    #[serde(rename = "x-kubernetes-embedded-resource", default)]
    pub embedded_resource: bool,
    #[serde(rename = "x-kubernetes-list-type")]
    pub list_type: Option<String>,
    #[serde(rename = "x-kubernetes-list-map-keys", default)]
    pub list_map_keys: Vec<String>,
    #[serde(rename = "x-kubernetes-map-type")]
    pub map_type: Option<String>,
    #[serde(rename = "x-kubernetes-validations", default)]
    pub validations: Vec<Validation>,
    /// One `{group, version, kind}` or a list of them.
    #[serde(rename = "x-kubernetes-group-version-kind")]
    pub gvk: Option<Value>,
}

impl Schema {
    /// Whether the node keeps fields it does not declare.
    pub fn preserves_unknown_fields(&self) -> bool {
        self.preserve_unknown_fields == Some(true)
    }
}

/// `additionalProperties`: `true`/`false` or the schema of the values.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum AdditionalProperties {
    Bool(bool),
    Schema(Box<Schema>),
}

/// One `x-kubernetes-validations` rule (a CEL expression).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Validation {
    #[serde(default)]
    pub rule: String,
    pub message: Option<String>,
    pub message_expression: Option<String>,
    pub reason: Option<String>,
    pub field_path: Option<String>,
}

/// An OpenAPI v3 document as the apiserver serves one per group/version.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct OpenApi {
    #[serde(default)]
    pub paths: BTreeMap<String, PathItem>,
    #[serde(default)]
    pub components: Components,
}

/// `components`: only the schemas matter here.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Components {
    #[serde(default)]
    pub schemas: BTreeMap<String, Schema>,
}

/// The operations of one request path.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PathItem {
    pub get: Option<Operation>,
    pub put: Option<Operation>,
    pub post: Option<Operation>,
    pub delete: Option<Operation>,
    pub patch: Option<Operation>,
    #[serde(default)]
    pub parameters: Vec<Parameter>,
}

impl PathItem {
    /// The operations, in the order OpenAPI lists the methods.
    pub fn operations(&self) -> impl Iterator<Item = (&'static str, &Operation)> {
        [("get", &self.get), ("put", &self.put), ("post", &self.post), ("delete", &self.delete), ("patch", &self.patch)]
            .into_iter()
            .filter_map(|(method, op)| op.as_ref().map(|op| (method, op)))
    }
}

/// One operation with the apiserver's extensions.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    #[serde(rename = "x-kubernetes-action")]
    pub action: Option<String>,
    #[serde(rename = "x-kubernetes-group-version-kind")]
    pub gvk: Option<Value>,
    #[serde(default)]
    pub parameters: Vec<Parameter>,
    pub request_body: Option<Body>,
    #[serde(default)]
    pub responses: BTreeMap<String, Body>,
}

/// A parameter (`in: query`, `in: path`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Parameter {
    #[serde(default)]
    pub name: String,
    #[serde(rename = "in", default)]
    pub location: String,
    pub description: Option<String>,
    pub schema: Option<Schema>,
}

/// A request body or a response: a schema per content type.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Body {
    #[serde(default)]
    pub content: BTreeMap<String, MediaType>,
}

/// The schema of one content type.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct MediaType {
    pub schema: Option<Schema>,
}
