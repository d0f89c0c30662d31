//! Patch (JSON patch, merge patch, strategic merge patch), server-side
//! apply, and the `scale` subresource.

use serde_json::{Value, json};

use super::handlers;
use super::route::{Answer, Ctx};
use super::merge::{self, ApplyError};
use super::status;
use super::tracker::{self, Key, ResourceInfo, Tracker};
use crate::rest::Status;

/// The patch types the apiserver accepts, by `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub(crate) fn from_content_type(content_type: &str) -> Result<PatchType, Status> {
        let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        match essence.as_str() {
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(PatchType::Apply),
            _ => Err(status::unsupported_media_type(content_type)),
        }
    }
}

/// 422 for a patch that does not apply.
fn unprocessable(message: impl Into<String>) -> Status {
    status::failure(422, "Invalid", message, None)
}

/// `document` patched by a JSON, merge or strategic merge `patch`.
fn patched(document: &Value, patch: &Value, patch_type: PatchType, resource: &ResourceInfo) -> Result<Value, Status> {
    let result = match patch_type {
        PatchType::Json => {
            let mut operations: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| status::bad_request(format!("invalid JSON patch: {e}")))?;
            // The apiserver's JSON patch passes a `test` of `null` on a
            // missing member (how "add the first finalizer" is guarded).
            operations.0.retain(|op| match op {
                json_patch::PatchOperation::Test(test) => {
                    !(test.value.is_null() && document.pointer(test.path.as_str()).is_none())
                }
                _ => true,
            });
            let mut document = document.clone();
            json_patch::patch(&mut document, &operations).map_err(|e| unprocessable(e.to_string()))?;
            document
        }
        PatchType::Merge => {
            let mut document = document.clone();
            json_patch::merge(&mut document, patch);
            document
        }
        PatchType::Strategic => merge::strategic_merge(document, patch, resource.merge).map_err(unprocessable)?,
        PatchType::Apply => return Err(status::bad_request("apply is not a patch of the scale subresource")),
    };
    if result.is_object() { Ok(result) } else { Err(unprocessable("the patched object is not a JSON object")) }
}

pub(crate) fn patch(t: &mut Tracker, ctx: &Ctx<'_>, body: Option<Value>, patch_type: PatchType, path: &str) -> Answer {
    let body = body.ok_or_else(|| status::bad_request("the patch body is not JSON (or YAML for apply)"))?;
    let resource = t.info(ctx.gvr());
    if resource.namespaced == Some(false) && ctx.info.namespace.is_some() {
        return Err(status::no_route(path));
    }
    let key = ctx.key(&resource);
    match ctx.subresource() {
        None | Some("status") => {}
        Some("finalize") if ctx.gvr().resource == "namespaces" && ctx.gvr().group.is_empty() => {}
        Some("scale") if resource.scale && patch_type != PatchType::Apply => {
            let old = t.get(ctx.gvr(), &key).ok_or_else(|| status::not_found(ctx.gvr(), ctx.name()))?;
            let scale = patched(&handlers::scale_of(old), &body, patch_type, &resource)?;
            return handlers::update_scale(t, ctx, &resource, &key, scale);
        }
        Some(_) => return Err(status::no_route(path)),
    }
    let old = t.get(ctx.gvr(), &key).cloned();
    if patch_type == PatchType::Apply {
        return apply(t, ctx, &resource, key, old, &body, path);
    }
    let old = old.ok_or_else(|| status::not_found(ctx.gvr(), ctx.name()))?;
    let new = patched(&old, &body, patch_type, &resource)?;
    Ok((200, handlers::commit(t, ctx, &resource, key, old, new)?))
}

fn apply(
    t: &mut Tracker,
    ctx: &Ctx<'_>,
    resource: &ResourceInfo,
    key: Key,
    old: Option<Value>,
    body: &Value,
    path: &str,
) -> Answer {
    let Some(manager) = ctx.param("fieldManager").filter(|m| !m.is_empty()) else {
        return Err(status::invalid(
            ctx.gvr(),
            &resource.kind,
            ctx.name(),
            "fieldManager",
            "FieldValueRequired",
            "Required value: is required for apply patch",
        ));
    };
    match tracker::meta_str(body, "name") {
        Some(name) if name != ctx.name() => {
            return Err(status::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({})",
                ctx.name()
            )));
        }
        _ => {}
    }
    let force = ctx.param("force") == Some("true");
    let now = tracker::now();
    let result = merge::server_side_apply(old.as_ref(), body, manager, force, ctx.subresource(), resource.merge, &now);
    let mut new = match result {
        Ok(new) => new,
        Err(ApplyError::Conflicts(conflicts)) => {
            return Err(status::apply_conflicts(ctx.gvr(), ctx.name(), &conflicts));
        }
        Err(ApplyError::Invalid(message)) => return Err(unprocessable(message)),
    };
    let ctx = Ctx { apply: true, ..ctx.clone() };
    match old {
        Some(old) => Ok((200, handlers::commit(t, &ctx, resource, key, old, new)?)),
        None if ctx.subresource().is_some() => Err(status::not_found(ctx.gvr(), ctx.name())),
        None => {
            tracker::meta_mut(&mut new).insert("name".into(), json!(ctx.name()));
            handlers::create(t, &ctx, Some(new), path)
        }
    }
}
