//! Lists: label and field selectors, `limit` and `continue` paging, and the
//! list body.

use base64::Engine as _;
use serde_json::{Value, json};

use super::route::{Answer, Ctx};
use super::status;
use super::tracker::{self, Gvr, Key, ResourceInfo, Tracker};
use crate::rest::Status;
use crate::selector::{FieldSelector, Fields, LabelSelector, Labels};

/// The label and field selectors of a list, watch or deletecollection.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    labels: Option<LabelSelector>,
    fields: Option<FieldSelector>,
}

/// An object's labels, read from its JSON.
struct JsonLabels<'a>(Option<&'a serde_json::Map<String, Value>>);

impl Labels for JsonLabels<'_> {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.0?.get(key)?.as_str()
    }
}

/// An object's fields by dotted path (`metadata.name`, `spec.nodeName`),
/// read from its JSON; only string values are seen.
struct JsonFields<'a>(&'a Value);

impl Fields for JsonFields<'_> {
    fn get_field(&self, name: &str) -> Option<&str> {
        name.split('.').try_fold(self.0, |v, part| v.get(part))?.as_str()
    }
}

impl Selection {
    pub(crate) fn from_query(ctx: &Ctx<'_>) -> Result<Selection, Status> {
        let labels = match ctx.param("labelSelector").filter(|s| !s.is_empty()) {
            Some(s) => Some(
                LabelSelector::parse(s)
                    .map_err(|e| status::bad_request(format!("unable to parse requirement: {e}")))?,
            ),
            None => None,
        };
        let fields = match ctx.param("fieldSelector").filter(|s| !s.is_empty()) {
            Some(s) => Some(
                FieldSelector::parse(s)
                    .map_err(|e| status::bad_request(format!("invalid field selector {s:?}: {e}")))?,
            ),
            None => None,
        };
        Ok(Selection { labels, fields })
    }

    /// Also only the object `name` (a watch of one object).
    pub(crate) fn and_name(mut self, name: &str) -> Selection {
        let term = FieldSelector::one_term_equal("metadata.name", name).ok();
        self.fields = match (self.fields.take(), term) {
            (Some(fields), Some(term)) => {
                Some(FieldSelector::from_terms(fields.terms().iter().cloned().chain(term.terms().iter().cloned())))
            }
            (fields, term) => fields.or(term),
        };
        self
    }

    pub(crate) fn matches(&self, object: &Value) -> bool {
        let labels_ok = self.labels.as_ref().is_none_or(|selector| {
            let labels = object.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_object);
            selector.matches(&JsonLabels(labels))
        });
        labels_ok && self.fields.as_ref().is_none_or(|selector| selector.matches(&JsonFields(object)))
    }
}

/// Where the next page starts, and the resourceVersion of the first page.
#[derive(serde::Serialize, serde::Deserialize)]
struct Continue {
    rv: u64,
    namespace: String,
    name: String,
}

fn encode_continue(rv: u64, key: &Key) -> String {
    let token = Continue { rv, namespace: key.0.clone(), name: key.1.clone() };
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(serde_json::to_vec(&token).unwrap_or_default())
}

fn decode_continue(token: &str) -> Result<Continue, Status> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(|| status::bad_request(format!("continue key is not valid: {token:?}")))
}

/// The message of a continue token from before the compaction.
const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.";

pub(crate) fn list(t: &Tracker, ctx: &Ctx<'_>) -> Answer {
    let resource = t.info(ctx.gvr());
    if resource.namespaced == Some(false) && ctx.info.namespace.is_some() {
        return Err(status::no_route(&ctx.gvr().resource));
    }
    let selection = Selection::from_query(ctx)?;
    let namespace = ctx.key_namespace(&resource);
    check_list_version(t, ctx)?;
    let limit = match ctx.param("limit") {
        Some(l) => l.parse::<usize>().map_err(|_| status::bad_request(format!("invalid limit {l:?}")))?,
        None => 0,
    };
    let (list_rv, start) = match ctx.param("continue").filter(|c| !c.is_empty()) {
        Some(token) => {
            let token = decode_continue(token)?;
            if token.rv < t.compacted {
                return Err(status::expired(CONTINUE_EXPIRED));
            }
            (token.rv, Some((token.namespace, token.name)))
        }
        None => (t.rv, None),
    };
    let candidates = t.objects(ctx.gvr()).into_iter().flat_map(|objects| match &start {
        Some(after) => {
            Box::new(objects.range::<Key, _>((std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded)))
                as Box<dyn Iterator<Item = (&Key, &Value)>>
        }
        None => Box::new(objects.iter()),
    });
    let mut matching =
        candidates.filter(|((ns, _), object)| (namespace.is_empty() || *ns == namespace) && selection.matches(object));
    let mut items = Vec::new();
    let mut last = None;
    for (key, object) in matching.by_ref() {
        items.push(object.clone());
        last = Some(key.clone());
        if limit > 0 && items.len() == limit {
            break;
        }
    }
    let remaining = if limit > 0 { matching.count() } else { 0 };
    let continue_token = (remaining > 0).then(|| last.map(|key| encode_continue(list_rv, &key))).flatten();
    let remaining = continue_token.as_ref().map(|_| remaining);
    Ok((200, list_body(ctx.gvr(), &resource, list_rv, items, continue_token, remaining)))
}

/// A list from an exact resourceVersion older than the compaction is gone.
fn check_list_version(t: &Tracker, ctx: &Ctx<'_>) -> Result<(), Status> {
    let Some(rv) = ctx.param("resourceVersion").filter(|rv| !rv.is_empty() && *rv != "0") else { return Ok(()) };
    let rv: u64 = rv.parse().map_err(|_| status::bad_request(format!("invalid resourceVersion {rv:?}")))?;
    if ctx.param("resourceVersionMatch") == Some("Exact") && rv < t.compacted {
        return Err(status::expired(format!("too old resource version: {rv} ({})", t.compacted)));
    }
    Ok(())
}

/// `{"kind": "<Kind>List", "apiVersion", "metadata": {...}, "items": [...]}`.
pub(crate) fn list_body(
    gvr: &Gvr,
    resource: &ResourceInfo,
    rv: u64,
    items: Vec<Value>,
    continue_token: Option<String>,
    remaining: Option<usize>,
) -> Value {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if let Some(token) = continue_token {
        metadata["continue"] = json!(token);
    }
    if let Some(remaining) = remaining {
        metadata["remainingItemCount"] = json!(remaining);
    }
    json!({
        "kind": resource.list_kind(),
        "apiVersion": gvr.api_version(),
        "metadata": metadata,
        "items": items,
    })
}

/// Objects of the request's namespace matching its selection (the
/// initial events of a watch).
pub(crate) fn matching(t: &Tracker, ctx: &Ctx<'_>, selection: &Selection) -> Vec<Value> {
    let resource = t.info(ctx.gvr());
    let namespace = ctx.key_namespace(&resource);
    t.objects(ctx.gvr())
        .into_iter()
        .flatten()
        .filter(|((ns, _), object)| (namespace.is_empty() || *ns == namespace) && selection.matches(object))
        .map(|(_, v)| v.clone())
        .collect()
}

/// Whether `object` (of a watch's resource) is in the watch's namespace.
pub(crate) fn in_namespace(object: &Value, namespace: &str) -> bool {
    namespace.is_empty() || tracker::meta_str(object, "namespace") == Some(namespace)
}
