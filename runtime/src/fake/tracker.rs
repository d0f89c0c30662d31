//! The fake's storage: every object as JSON per group/version/resource,
//! one resourceVersion counter for the whole cluster (as etcd's revision),
//! and the log of changes watches replay from.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use rand::Rng as _;
use serde_json::Value;

use crate::apply::Merge;
use crate::object::DynamicResource;

/// A group/version/resource: where objects are kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Gvr {
    pub group: String,
    pub version: String,
    pub resource: String,
}

impl Gvr {
    pub(crate) fn of(resource: &DynamicResource) -> Gvr {
        Gvr { group: resource.group.clone(), version: resource.version.clone(), resource: resource.plural.clone() }
    }

    /// `pods`, `deployments.apps`: how the apiserver names a resource in
    /// messages.
    pub(crate) fn qualified(&self) -> String {
        if self.group.is_empty() { self.resource.clone() } else { format!("{}.{}", self.resource, self.group) }
    }

    /// The objects' `apiVersion`.
    pub(crate) fn api_version(&self) -> String {
        crate::object::GroupVersion::new(&self.group, &self.version).api_version()
    }
}

/// What the fake knows of a resource.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResourceInfo {
    /// Empty until registered or learned from a body.
    pub kind: String,
    pub list_kind: String,
    /// `None`: not registered; the path of each request decides.
    pub namespaced: Option<bool>,
    pub status: bool,
    pub scale: bool,
    pub merge: Option<Merge>,
}

impl ResourceInfo {
    /// `<Kind>List`, or `List` while the kind is unknown.
    pub(crate) fn list_kind(&self) -> String {
        if !self.list_kind.is_empty() { self.list_kind.clone() } else { format!("{}List", self.kind) }
    }
}

/// The type of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Added,
    Modified,
    Deleted,
}

impl Change {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Change::Added => "ADDED",
            Change::Modified => "MODIFIED",
            Change::Deleted => "DELETED",
        }
    }
}

/// One change, as watches see it.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub rv: u64,
    pub gvr: Arc<Gvr>,
    pub change: Change,
    /// The object after the change (for a deletion: as it was, with the
    /// deletion's resourceVersion).
    pub object: Arc<Value>,
    /// The object before a modification, so a watch with a selector can
    /// tell an object entering or leaving it.
    pub old: Option<Arc<Value>>,
}

/// An object's key within its resource: namespace (empty at cluster
/// scope) and name, in etcd's key order.
pub(crate) type Key = (String, String);

/// Objects, resource knowledge, resourceVersions and the change log.
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    pub resources: HashMap<Gvr, ResourceInfo>,
    objects: HashMap<Gvr, BTreeMap<Key, Value>>,
    gvrs: HashMap<Gvr, Arc<Gvr>>,
    /// The last resourceVersion handed out.
    pub rv: u64,
    /// Changes at or before this resourceVersion are forgotten.
    pub compacted: u64,
    events: VecDeque<Event>,
}

impl Tracker {
    pub(crate) fn info(&self, gvr: &Gvr) -> ResourceInfo {
        self.resources.get(gvr).cloned().unwrap_or_default()
    }

    pub(crate) fn info_mut(&mut self, gvr: &Gvr) -> &mut ResourceInfo {
        self.resources.entry(gvr.clone()).or_default()
    }

    pub(crate) fn objects(&self, gvr: &Gvr) -> Option<&BTreeMap<Key, Value>> {
        self.objects.get(gvr)
    }

    pub(crate) fn get(&self, gvr: &Gvr, key: &Key) -> Option<&Value> {
        self.objects.get(gvr)?.get(key)
    }

    /// The next resourceVersion.
    pub(crate) fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Stores `object` (whose resourceVersion is `rv`) and logs the change.
    pub(crate) fn put(&mut self, gvr: &Gvr, key: Key, object: Value, rv: u64, change: Change) {
        let stored = Arc::new(object.clone());
        let old = self.objects.entry(gvr.clone()).or_default().insert(key, object);
        self.log(gvr, rv, change, stored, old.map(Arc::new));
    }

    /// Removes the object, logging its deletion as `object` (the object
    /// with the deletion's resourceVersion).
    pub(crate) fn remove(&mut self, gvr: &Gvr, key: &Key, object: Value, rv: u64) {
        if let Some(objects) = self.objects.get_mut(gvr) {
            objects.remove(key);
        }
        self.log(gvr, rv, Change::Deleted, Arc::new(object), None);
    }

    fn log(&mut self, gvr: &Gvr, rv: u64, change: Change, object: Arc<Value>, old: Option<Arc<Value>>) {
        let gvr = self.gvrs.entry(gvr.clone()).or_insert_with(|| Arc::new(gvr.clone())).clone();
        self.events.push_back(Event { rv, gvr, change, object, old });
    }

    /// The changes after `rv`, oldest first.
    pub(crate) fn events_after(&self, rv: u64) -> impl Iterator<Item = &Event> {
        let start = self.events.partition_point(|e| e.rv <= rv);
        self.events.range(start..)
    }

    /// Forgets every change so far: a watch or a continue token from an
    /// earlier resourceVersion is answered 410.
    pub(crate) fn compact(&mut self) {
        self.compacted = self.rv;
        self.events.clear();
    }
}

/// Now, as the apiserver writes timestamps (RFC 3339, whole seconds, UTC).
pub(crate) fn now() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second()).unwrap_or(now).to_string()
}

/// A random version 4 UUID, as the apiserver's `metadata.uid`.
pub(crate) fn new_uid() -> String {
    let mut bytes: [u8; 16] = rand::rng().random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// `prefix` and five random characters, as the apiserver completes a
/// `generateName` (the alphabet of apimachinery's `rand.String`).
pub(crate) fn generate_name(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    let suffix: String = (0..5).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect();
    format!("{prefix}{suffix}")
}

/// `metadata.<field>` as a string.
pub(crate) fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata")?.get(field)?.as_str()
}

/// `metadata`, made an object if it is not one.
pub(crate) fn meta_mut(object: &mut Value) -> &mut serde_json::Map<String, Value> {
    // Bodies are checked to be objects before they get here.
    if !object.is_object() {
        *object = Value::Object(serde_json::Map::new());
    }
    let Some(map) = object.as_object_mut() else { unreachable!("made an object above") };
    let meta = map.entry("metadata").or_insert_with(|| Value::Object(serde_json::Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(serde_json::Map::new());
    }
    match meta {
        Value::Object(m) => m,
        _ => unreachable!("metadata was just made an object"),
    }
}

/// Whether a deletion is pending on `object` (it has finalizers).
pub(crate) fn has_finalizers(object: &Value) -> bool {
    object.get("metadata").and_then(|m| m.get("finalizers")).and_then(Value::as_array).is_some_and(|f| !f.is_empty())
}
