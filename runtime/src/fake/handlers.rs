//! The verbs that read and write single objects: get, create, update,
//! delete and deletecollection, with the metadata the apiserver maintains
//! (uid, creationTimestamp, resourceVersion, generation, deletion).

use serde_json::{Value, json};

use super::list::{self, Selection};
use super::merge;
use super::route::{Answer, Ctx};
use super::status;
use super::tracker::{self, Change, Gvr, Key, ResourceInfo, Tracker};
use crate::rest::Status;

/// A body that must be a JSON object.
pub(crate) fn object_body(body: Option<Value>) -> Result<Value, Status> {
    match body {
        Some(v @ Value::Object(_)) => Ok(v),
        Some(_) => Err(status::bad_request("the request body must be a JSON object")),
        None => Err(status::bad_request("the request needs a JSON body")),
    }
}

/// A registered cluster-scoped resource asked for inside a namespace, or
/// a namespaced one's object asked for outside any: no such path.
fn check_scope(ctx: &Ctx<'_>, resource: &ResourceInfo, path: &str) -> Result<(), Status> {
    match (resource.namespaced, &ctx.info.namespace, &ctx.info.name) {
        (Some(false), Some(_), _) => Err(status::no_route(path)),
        (Some(true), None, Some(_)) => Err(status::no_route(path)),
        _ => Ok(()),
    }
}

/// The namespace the body names must be the path's.
fn check_body_namespace(object: &Value, namespace: &str) -> Result<(), Status> {
    match tracker::meta_str(object, "namespace") {
        Some(ns) if !ns.is_empty() && !namespace.is_empty() && ns != namespace => Err(status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => Ok(()),
    }
}

/// Learns the kind of a resource never registered from the first body
/// that names it.
fn learn_kind(t: &mut Tracker, gvr: &Gvr, object: &Value) {
    let info = t.info_mut(gvr);
    if info.kind.is_empty()
        && let Some(kind) = object.get("kind").and_then(Value::as_str)
    {
        info.kind = kind.to_owned();
    }
}

/// `apiVersion` and `kind` as the apiserver writes them on every object.
pub(crate) fn set_type_meta(object: &mut Value, gvr: &Gvr, resource: &ResourceInfo) {
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), Value::String(gvr.api_version()));
        if !resource.kind.is_empty() {
            map.insert("kind".into(), Value::String(resource.kind.clone()));
        }
    }
}

pub(crate) fn get(t: &Tracker, ctx: &Ctx<'_>, path: &str) -> Answer {
    let resource = t.info(ctx.gvr());
    check_scope(ctx, &resource, path)?;
    let key = ctx.key(&resource);
    let object = t.get(ctx.gvr(), &key).ok_or_else(|| status::not_found(ctx.gvr(), ctx.name()))?;
    match ctx.subresource() {
        None | Some("status") => Ok((200, object.clone())),
        Some("scale") if resource.scale => Ok((200, scale_of(object))),
        Some(_) => Err(status::no_route(path)),
    }
}

pub(crate) fn create(t: &mut Tracker, ctx: &Ctx<'_>, body: Option<Value>, path: &str) -> Answer {
    if ctx.subresource().is_some() {
        return Err(status::no_route(path));
    }
    let mut object = object_body(body)?;
    learn_kind(t, ctx.gvr(), &object);
    let resource = t.info(ctx.gvr());
    check_scope(ctx, &resource, path)?;
    let namespace = ctx.key_namespace(&resource);
    check_body_namespace(&object, &namespace)?;
    let name = match tracker::meta_str(&object, "name").filter(|n| !n.is_empty()) {
        Some(name) => name.to_owned(),
        None => match tracker::meta_str(&object, "generateName").filter(|n| !n.is_empty()) {
            Some(prefix) => tracker::generate_name(prefix),
            None => {
                return Err(status::invalid(
                    ctx.gvr(),
                    &resource.kind,
                    "",
                    "metadata.name",
                    "FieldValueRequired",
                    "Required value: name or generateName is required",
                ));
            }
        },
    };
    let key = (namespace.clone(), name.clone());
    if t.get(ctx.gvr(), &key).is_some() {
        return Err(status::already_exists(ctx.gvr(), &name));
    }
    set_type_meta(&mut object, ctx.gvr(), &resource);
    let now = tracker::now();
    {
        let meta = tracker::meta_mut(&mut object);
        meta.insert("name".into(), json!(name));
        if namespace.is_empty() {
            meta.remove("namespace");
        } else {
            meta.insert("namespace".into(), json!(namespace));
        }
        meta.insert("uid".into(), json!(tracker::new_uid()));
        meta.insert("creationTimestamp".into(), json!(now));
        meta.insert("generation".into(), json!(1));
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
        meta.remove("resourceVersion");
    }
    if resource.status
        && !ctx.seed
        && let Some(map) = object.as_object_mut()
    {
        map.remove("status");
    }
    if !ctx.apply {
        merge::record_update(None, &mut object, &ctx.manager, None, resource.merge, &now);
    }
    if ctx.dry_run {
        return Ok((201, object));
    }
    let rv = t.next_rv();
    tracker::meta_mut(&mut object).insert("resourceVersion".into(), json!(rv.to_string()));
    t.put(ctx.gvr(), key, object.clone(), rv, Change::Added);
    Ok((201, object))
}

pub(crate) fn update(t: &mut Tracker, ctx: &Ctx<'_>, body: Option<Value>, path: &str) -> Answer {
    let mut object = object_body(body)?;
    learn_kind(t, ctx.gvr(), &object);
    let resource = t.info(ctx.gvr());
    check_scope(ctx, &resource, path)?;
    let key = ctx.key(&resource);
    match ctx.subresource() {
        None | Some("status") => {}
        Some("finalize") if ctx.gvr().resource == "namespaces" && ctx.gvr().group.is_empty() => {}
        Some("scale") if resource.scale => return update_scale(t, ctx, &resource, &key, object),
        Some(_) => return Err(status::no_route(path)),
    }
    check_body_namespace(&object, &key.0)?;
    match tracker::meta_str(&object, "name") {
        Some(name) if !name.is_empty() && name != ctx.name() => {
            return Err(status::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({})",
                ctx.name()
            )));
        }
        _ => {}
    }
    let old = t.get(ctx.gvr(), &key).cloned().ok_or_else(|| status::not_found(ctx.gvr(), ctx.name()))?;
    if let Some(uid) = tracker::meta_str(&object, "uid").filter(|u| !u.is_empty())
        && Some(uid) != tracker::meta_str(&old, "uid")
    {
        return Err(status::conflict(
            ctx.gvr(),
            ctx.name(),
            &format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                tracker::meta_str(&old, "uid").unwrap_or_default()
            ),
        ));
    }
    set_type_meta(&mut object, ctx.gvr(), &resource);
    let object = commit(t, ctx, &resource, key, old, object)?;
    Ok((200, object))
}

/// Writes `new` over `old` as an update (or patch) does: only what the
/// subresource may change, system metadata kept, the resourceVersion
/// precondition checked, generation bumped when more than metadata and
/// status changed, nothing written when nothing changed, and the object
/// removed when its last finalizer goes during a pending deletion.
pub(crate) fn commit(
    t: &mut Tracker,
    ctx: &Ctx<'_>,
    resource: &ResourceInfo,
    key: Key,
    old: Value,
    mut new: Value,
) -> Result<Value, Status> {
    let gvr = ctx.gvr();
    if let Some(rv) = tracker::meta_str(&new, "resourceVersion").filter(|rv| !rv.is_empty())
        && Some(rv) != tracker::meta_str(&old, "resourceVersion")
    {
        return Err(status::conflict(gvr, ctx.name(), status::MODIFIED));
    }
    match ctx.subresource() {
        Some("status") => {
            let status = new.get("status").cloned();
            new = with_field(old.clone(), "status", status);
        }
        Some("finalize") => {
            let finalizers = new.get("spec").and_then(|s| s.get("finalizers")).cloned();
            let mut spec = old.get("spec").cloned().unwrap_or_else(|| json!({}));
            if let Some(map) = spec.as_object_mut() {
                match finalizers {
                    Some(f) => map.insert("finalizers".into(), f),
                    None => map.remove("finalizers"),
                };
            }
            new = with_field(old.clone(), "spec", Some(spec));
        }
        _ if resource.status => {
            let status = old.get("status").cloned();
            new = with_field(new, "status", status);
        }
        _ => {}
    }
    let old_meta = old.get("metadata").cloned().unwrap_or_else(|| json!({}));
    {
        let meta = tracker::meta_mut(&mut new);
        for field in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "resourceVersion",
        ] {
            match old_meta.get(field) {
                Some(v) => meta.insert(field.into(), v.clone()),
                None => meta.remove(field),
            };
        }
    }
    if without_metadata_and_status(&new) != without_metadata_and_status(&old) {
        let generation = old_meta.get("generation").and_then(Value::as_i64).unwrap_or(0) + 1;
        tracker::meta_mut(&mut new).insert("generation".into(), json!(generation));
    }
    let now = tracker::now();
    if !ctx.apply {
        merge::record_update(Some(&old), &mut new, &ctx.manager, ctx.subresource(), resource.merge, &now);
    }
    if new == old || ctx.dry_run {
        return Ok(new);
    }
    let rv = t.next_rv();
    tracker::meta_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
    if old_meta.get("deletionTimestamp").is_some() && !tracker::has_finalizers(&new) {
        t.remove(gvr, &key, new.clone(), rv);
    } else {
        t.put(gvr, key, new.clone(), rv, Change::Modified);
    }
    Ok(new)
}

/// `object` with top-level `field` set to `value` (removed when `None`).
fn with_field(mut object: Value, field: &str, value: Option<Value>) -> Value {
    if let Some(map) = object.as_object_mut() {
        match value {
            Some(v) => map.insert(field.into(), v),
            None => map.remove(field),
        };
    }
    object
}

fn without_metadata_and_status(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("metadata");
        map.remove("status");
    }
    copy
}

pub(crate) fn delete(t: &mut Tracker, ctx: &Ctx<'_>, body: Option<Value>, path: &str) -> Answer {
    let resource = t.info(ctx.gvr());
    check_scope(ctx, &resource, path)?;
    if ctx.subresource().is_some() {
        return Err(status::method_not_allowed("DELETE", path));
    }
    let key = ctx.key(&resource);
    let old = t.get(ctx.gvr(), &key).cloned().ok_or_else(|| status::not_found(ctx.gvr(), ctx.name()))?;
    let options = body.unwrap_or(Value::Null);
    let dry_run = ctx.dry_run || options.get("dryRun").and_then(Value::as_array).is_some_and(|d| !d.is_empty());
    if let Some(pre) = options.get("preconditions") {
        for (field, what) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
            if let Some(want) = pre.get(field).and_then(Value::as_str) {
                let have = tracker::meta_str(&old, field).unwrap_or_default();
                if want != have {
                    return Err(status::conflict(
                        ctx.gvr(),
                        ctx.name(),
                        &format!("Precondition failed: {what} in precondition: {want}, {what} in object meta: {have}"),
                    ));
                }
            }
        }
    }
    delete_object(t, ctx.gvr(), key, old, dry_run)
}

/// Deletes one object: marks it when finalizers keep it (answering with
/// the object), else removes it (answering with a `Success` Status).
fn delete_object(t: &mut Tracker, gvr: &Gvr, key: Key, mut object: Value, dry_run: bool) -> Answer {
    if tracker::has_finalizers(&object) {
        if tracker::meta_str(&object, "deletionTimestamp").is_some() || dry_run {
            return Ok((200, object));
        }
        {
            let meta = tracker::meta_mut(&mut object);
            meta.insert("deletionTimestamp".into(), json!(tracker::now()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            // As the apiserver's store: controllers that skip metadata-only
            // updates must still see the deletion start.
            if let Some(generation) = meta.get("generation").and_then(Value::as_i64).filter(|g| *g > 0) {
                meta.insert("generation".into(), json!(generation + 1));
            }
        }
        let rv = t.next_rv();
        tracker::meta_mut(&mut object).insert("resourceVersion".into(), json!(rv.to_string()));
        t.put(gvr, key, object.clone(), rv, Change::Modified);
        return Ok((200, object));
    }
    let done = status::deleted(gvr, &key.1, tracker::meta_str(&object, "uid").unwrap_or_default());
    let done = serde_json::to_value(done).unwrap_or(Value::Null);
    if dry_run {
        return Ok((200, done));
    }
    let rv = t.next_rv();
    tracker::meta_mut(&mut object).insert("resourceVersion".into(), json!(rv.to_string()));
    t.remove(gvr, &key, object, rv);
    Ok((200, done))
}

pub(crate) fn delete_collection(t: &mut Tracker, ctx: &Ctx<'_>, body: Option<Value>, path: &str) -> Answer {
    let resource = t.info(ctx.gvr());
    check_scope(ctx, &resource, path)?;
    let selection = Selection::from_query(ctx)?;
    let dry_run = ctx.dry_run
        || body.as_ref().and_then(|b| b.get("dryRun")).and_then(Value::as_array).is_some_and(|d| !d.is_empty());
    let namespace = ctx.key_namespace(&resource);
    let doomed: Vec<(Key, Value)> = t
        .objects(ctx.gvr())
        .into_iter()
        .flatten()
        .filter(|((ns, _), object)| (namespace.is_empty() || *ns == namespace) && selection.matches(object))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut items = Vec::with_capacity(doomed.len());
    for (key, object) in doomed {
        let (_, answer) = delete_object(t, ctx.gvr(), key, object.clone(), dry_run)?;
        items.push(if answer.get("kind").and_then(Value::as_str) == Some("Status") { object } else { answer });
    }
    Ok((200, list::list_body(ctx.gvr(), &resource, t.rv, items, None, None)))
}

/// The `autoscaling/v1` `Scale` of an object: `.spec.replicas`,
/// `.status.replicas` and the selector (`.status.selector` when it is a
/// string, else `.spec.selector.matchLabels` written out).
pub(crate) fn scale_of(object: &Value) -> Value {
    let meta = object.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let mut scale_meta = serde_json::Map::new();
    for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(v) = meta.get(field) {
            scale_meta.insert(field.into(), v.clone());
        }
    }
    let replicas = |part: &str| object.get(part).and_then(|p| p.get("replicas")).and_then(Value::as_i64).unwrap_or(0);
    let mut status = json!({"replicas": replicas("status")});
    let selector = match object.get("status").and_then(|s| s.get("selector")) {
        Some(Value::String(s)) => Some(s.clone()),
        _ => object
            .get("spec")
            .and_then(|s| s.get("selector"))
            .and_then(|s| s.get("matchLabels"))
            .and_then(Value::as_object)
            .map(|labels| {
                let mut pairs: Vec<String> =
                    labels.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default())).collect();
                pairs.sort();
                pairs.join(",")
            }),
    };
    if let Some(selector) = selector.filter(|s| !s.is_empty()) {
        status["selector"] = json!(selector);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": scale_meta,
        "spec": {"replicas": replicas("spec")},
        "status": status,
    })
}

/// Writes a `Scale`'s `spec.replicas` into the object's `.spec.replicas`
/// and answers with the new `Scale`.
pub(crate) fn update_scale(t: &mut Tracker, ctx: &Ctx<'_>, resource: &ResourceInfo, key: &Key, scale: Value) -> Answer {
    let old = t.get(ctx.gvr(), key).cloned().ok_or_else(|| status::not_found(ctx.gvr(), ctx.name()))?;
    if let Some(rv) = tracker::meta_str(&scale, "resourceVersion").filter(|rv| !rv.is_empty())
        && Some(rv) != tracker::meta_str(&old, "resourceVersion")
    {
        return Err(status::conflict(ctx.gvr(), ctx.name(), status::MODIFIED));
    }
    let replicas = scale.get("spec").and_then(|s| s.get("replicas")).cloned().unwrap_or(json!(0));
    let mut new = old.clone();
    if let Some(map) = new.as_object_mut() {
        let spec = map.entry("spec").or_insert_with(|| json!({}));
        if !spec.is_object() {
            *spec = json!({});
        }
        spec["replicas"] = replicas;
    }
    let new = commit(t, ctx, resource, key.clone(), old, new)?;
    Ok((200, scale_of(&new)))
}
