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
    /// `type`: `object`, `array`, `string`, `integer`, `number` or
    /// `boolean`. Absent on a node that only refers (`$ref`, a one-member
    /// `allOf`), is int-or-string, or preserves unknown fields; an absent type
    /// with `properties` is an object.
    #[serde(rename = "type")]
    pub ty: Option<String>,
    /// `format`, refining `type`: `int32` (other integers are `i64`), `byte`
    /// (base64 text, decoded to bytes) and, in custom resources, `date-time`
    /// (`Time`) change the Rust type; other formats are ignored.
    pub format: Option<String>,
    /// The schema's prose: the doc comment of the type or field made from
    /// this node, kept as written.
    pub description: Option<String>,
    /// An object's declared fields by wire name. Sorted, so the fields of the
    /// generated struct come out in one order whatever the input's.
    #[serde(default)]
    pub properties: BTreeMap<String, Schema>,
    /// Wire names of the properties that must be present: their fields are
    /// not `Option` (unless also `nullable`).
    #[serde(default)]
    pub required: Vec<String>,
    /// An array's element schema; an array without one holds any JSON
    /// (`Vec<Value>`).
    pub items: Option<Box<Schema>>,
    /// A map-like object's values (`BTreeMap<String, T>`). Beside
    /// `properties` the declared fields win and this is not read (a CRD may
    /// only say `true` there).
    pub additional_properties: Option<AdditionalProperties>,
    /// `enum`: the allowed values, as JSON since they need not be strings. A
    /// custom resource's string enum becomes a Rust enum with a fallback for
    /// values a newer server sends; any other enum is listed in the field's
    /// docs.
    #[serde(rename = "enum")]
    pub enum_values: Option<Vec<Value>>,
    /// `default`: what the apiserver fills in when the field is absent. Only
    /// documented (on a custom resource's field); the client never applies it.
    pub default: Option<Value>,
    /// `nullable: true`: `null` is a valid value, so even a required field
    /// becomes an `Option` (written as `null` when `None`).
    #[serde(default)]
    pub nullable: bool,
    /// `allOf`. One member and nothing else beside it stands for that member
    /// (how a `$ref` carries a description); otherwise it only restricts
    /// values and the type comes from this node's own keywords.
    #[serde(default)]
    pub all_of: Vec<Schema>,
    /// `anyOf`: only restricts values, never read for the type; the
    /// int-or-string pattern (`[{type: integer}, {type: string}]`) is typed
    /// by the `x-kubernetes-int-or-string` beside it.
    #[serde(default)]
    pub any_of: Vec<Schema>,
    /// `oneOf`: only restricts values, never read for the type.
    #[serde(default)]
    pub one_of: Vec<Schema>,
    /// `not`: only restricts values, never read for the type.
    pub not: Option<Box<Schema>>,
    /// `x-kubernetes-int-or-string`: the value is an integer or a string
    /// (`IntOrString`), whatever `type` and `anyOf` say.
    #[serde(rename = "x-kubernetes-int-or-string", default)]
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields`: the apiserver keeps fields the
    /// schema does not declare, so the client must too. Read through
    /// [`Schema::preserves_unknown_fields`]: `false` means the same as absent.
    #[serde(rename = "x-kubernetes-preserve-unknown-fields")]
    pub preserve_unknown_fields: Option<bool>,
    /// `x-kubernetes-embedded-resource`: the object is a whole Kubernetes
    /// object inside another (a template), so its `metadata` is `ObjectMeta`
    /// and its `apiVersion` and `kind` must be strings.
    #[serde(rename = "x-kubernetes-embedded-resource", default)]
    pub embedded_resource: bool,
    /// `x-kubernetes-list-type` (`atomic`, `set`, `map`): how server-side
    /// apply merges the array. Not reflected in types; read for the merge
    /// facts apply configurations extract by ([`crate::ir::MergeFacts`]) and
    /// to refuse it where a structural CRD schema may not have it.
    #[serde(rename = "x-kubernetes-list-type")]
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`: the item fields that identify an element
    /// of a `map` list. Read only for the structural rules.
    #[serde(rename = "x-kubernetes-list-map-keys", default)]
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type` (`atomic`, `granular`): how server-side apply
    /// merges the object. Read as the list type.
    #[serde(rename = "x-kubernetes-map-type")]
    pub map_type: Option<String>,
    /// `x-kubernetes-patch-strategy` (`merge`, `retainKeys`, ...): a
    /// built-in array without a list type whose strategy contains `merge`
    /// is associative for server-side apply too.
    #[serde(rename = "x-kubernetes-patch-strategy")]
    pub patch_strategy: Option<String>,
    /// `x-kubernetes-patch-merge-key`: the item field identifying an
    /// element of such an array (without one it is a set).
    #[serde(rename = "x-kubernetes-patch-merge-key")]
    pub patch_merge_key: Option<String>,
    /// `x-kubernetes-validations`: CEL rules the apiserver checks on writes.
    /// The generator copies them into the field's docs; it never evaluates
    /// them.
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
    /// `true`: values of any JSON (`BTreeMap<String, Value>`); `false`: no
    /// fields beyond `properties`.
    Bool(bool),
    /// The schema every value of the map follows.
    Schema(Box<Schema>),
}

/// One `x-kubernetes-validations` rule (a CEL expression).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Validation {
    /// The CEL expression, over `self`, the node the rule sits on. Empty when
    /// the manifest leaves it out (the apiserver refuses such a rule).
    #[serde(default)]
    pub rule: String,
    /// What the apiserver answers when the rule fails; shown beside the rule
    /// in the field's docs.
    pub message: Option<String>,
    /// A CEL expression computing the message instead. Parsed, not used.
    pub message_expression: Option<String>,
    /// The reason of the apiserver's error when the rule fails
    /// (`FieldValueInvalid` unless set). Parsed, not used.
    pub reason: Option<String>,
    /// The field the failure is reported on, relative to the node
    /// (`.spec.replicas`). Parsed, not used.
    pub field_path: Option<String>,
}

/// An OpenAPI v3 document as the apiserver serves one per group/version.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct OpenApi {
    /// Request paths (`/apis/apps/v1/namespaces/{namespace}/deployments`)
    /// and their operations: where [`crate::spec`] finds resources, verbs,
    /// scopes and subresources.
    #[serde(default)]
    pub paths: BTreeMap<String, PathItem>,
    /// Where the named schemas live, the targets of every `$ref`.
    #[serde(default)]
    pub components: Components,
}

/// `components`: only the schemas matter here.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Components {
    /// Schemas by the apiserver's name (`io.k8s.api.apps.v1.Deployment`,
    /// reversed group for custom resources); each becomes one Rust type.
    #[serde(default)]
    pub schemas: BTreeMap<String, Schema>,
}

/// The operations of one request path.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PathItem {
    /// `GET`: get, list or watch (and some connects); its
    /// `x-kubernetes-action` says which.
    pub get: Option<Operation>,
    /// `PUT`: update (replace), of the object or a subresource.
    pub put: Option<Operation>,
    /// `POST`: create, or a subresource's create (an eviction, a token).
    pub post: Option<Operation>,
    /// `DELETE`: delete, or deletecollection on a collection's path.
    pub delete: Option<Operation>,
    /// `PATCH`: patch, of the object or a subresource.
    pub patch: Option<Operation>,
    /// Parameters every operation of the path takes (`namespace`, `name`,
    /// `pretty`); an operation's own parameter of the same name wins.
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
    /// `x-kubernetes-action`: the verb (`get`, `list`, `watch`, `post`,
    /// `put`, `patch`, `delete`, `deletecollection`, `connect`, ...). An
    /// operation without one is not read.
    #[serde(rename = "x-kubernetes-action")]
    pub action: Option<String>,
    /// `x-kubernetes-group-version-kind`: the kind the operation serves,
    /// which names a resource's kind and a subresource's object kind (`Scale`).
    /// One object or a list, as on a schema.
    #[serde(rename = "x-kubernetes-group-version-kind")]
    pub gvk: Option<Value>,
    /// The operation's own parameters. Only query parameters are read: a
    /// list's `watch` (custom resources have no `/watch/` paths) and the
    /// options of a subresource read as text (a pod's `log`).
    #[serde(default)]
    pub parameters: Vec<Parameter>,
    /// The body a create, update, patch or subresource write takes; the
    /// `$ref` of its JSON schema is the body's type.
    pub request_body: Option<Body>,
    /// Responses by status code (`200`, `201`, ...): the first `2xx` with a
    /// JSON schema gives the answer's type (a list's list kind).
    #[serde(default)]
    pub responses: BTreeMap<String, Body>,
}

/// A parameter (`in: query`, `in: path`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Parameter {
    /// The parameter's name in the query or path (`labelSelector`,
    /// `namespace`).
    #[serde(default)]
    pub name: String,
    /// `in`: `query`, `path` or `header`; only query parameters are read.
    #[serde(rename = "in", default)]
    pub location: String,
    /// Prose, the doc of the field it becomes in a params struct.
    pub description: Option<String>,
    /// The value's schema, a scalar: boolean, integer (`int32` or not),
    /// number or string; a parameter without one is a string.
    pub schema: Option<Schema>,
}

/// A request body or a response: a schema per content type.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Body {
    /// Schemas by content type: `application/json`, `*/*` for most request
    /// bodies, the patch types (`application/merge-patch+json`, ...) for
    /// patches.
    #[serde(default)]
    pub content: BTreeMap<String, MediaType>,
}

/// The schema of one content type.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct MediaType {
    /// The body's schema: a `$ref` to the type the generator names it with;
    /// none for bodies without a schema.
    pub schema: Option<Schema>,
}
