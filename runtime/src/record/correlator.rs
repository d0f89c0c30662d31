//! client-go's `EventCorrelator`: what happens to an event between the
//! recorder and the sink.
//!
//! 1. **Aggregation** ([`CorrelatorOptions::max_events`]): events that differ
//!    only in their message are folded, once too many distinct messages
//!    were seen within [`CorrelatorOptions::max_interval`], into one event
//!    whose message starts with `(combined from similar events): `.
//! 2. **Count updates**: an event identical to one already written becomes
//!    a patch of that event's `count`, `lastTimestamp` and `message`.
//! 3. **Spam filter**: a token bucket per source and involved object
//!    ([`CorrelatorOptions::burst_size`], refilled at
//!    [`CorrelatorOptions::qps`]) drops what exceeds it.
//!
//! The windows run on tokio's clock so that tests can pause it; the
//! timestamps written into events are wall-clock time.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use tokio::time::Instant;

use super::event::{EventRecord, format_time};
use crate::broadcast::unique_event_name;
use crate::dynamic::DynamicObject;

/// Prefix of the message of an aggregated event.
pub const COMBINED_MESSAGE_PREFIX: &str = "(combined from similar events): ";

/// Tuning of the correlator (client-go's `CorrelatorOptions`); the
/// defaults are client-go's.
#[derive(Debug, Clone, PartialEq)]
pub struct CorrelatorOptions {
    /// Entries kept by each of the aggregation, count and spam caches.
    pub lru_cache_size: usize,
    /// Events per source+object let through at once.
    pub burst_size: u32,
    /// Tokens per second refilled into that bucket (1 per 5 minutes).
    pub qps: f64,
    /// Distinct messages of similar events before aggregation starts.
    pub max_events: usize,
    /// How long similar events are remembered for aggregation.
    pub max_interval: Duration,
}

impl Default for CorrelatorOptions {
    fn default() -> Self {
        CorrelatorOptions {
            lru_cache_size: 4096,
            burst_size: 25,
            qps: 1.0 / 300.0,
            max_events: 10,
            max_interval: Duration::from_secs(600),
        }
    }
}

/// A least-recently-used map; small enough not to warrant a dependency.
#[derive(Debug)]
struct Lru<V> {
    cap: usize,
    tick: u64,
    map: HashMap<String, (V, u64)>,
    order: BTreeMap<u64, String>,
}

impl<V> Lru<V> {
    fn new(cap: usize) -> Self {
        Lru { cap: cap.max(1), tick: 0, map: HashMap::new(), order: BTreeMap::new() }
    }

    fn touch(&mut self, key: &str) -> Option<&mut V> {
        self.tick += 1;
        let tick = self.tick;
        let (v, t) = self.map.get_mut(key)?;
        self.order.remove(t);
        *t = tick;
        self.order.insert(tick, key.to_owned());
        Some(v)
    }

    fn insert(&mut self, key: String, value: V) {
        self.tick += 1;
        if let Some((_, old)) = self.map.insert(key.clone(), (value, self.tick)) {
            self.order.remove(&old);
        }
        self.order.insert(self.tick, key);
        while self.map.len() > self.cap {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.map.remove(&oldest);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }
}

// Keys join fields with a unit separator so that ("ab","c") and ("a","bc")
// differ; client-go joins with "" and accepts the ambiguity.
fn join(parts: &[&str]) -> String {
    parts.join("\u{1f}")
}

/// The event's source and involved object: the spam filter's key, and the
/// start of the other two.
fn object_parts(e: &EventRecord) -> Vec<&str> {
    let o = &e.involved_object;
    [&e.source.component, &e.source.host, &o.kind, &o.namespace, &o.name, &o.uid, &o.api_version]
        .map(String::as_str)
        .to_vec()
}

/// Everything but the message: events with this key are "similar".
fn aggregate_key(e: &EventRecord) -> String {
    let mut parts = object_parts(e);
    parts.extend([&e.type_, &e.reason, &e.reporting_component, &e.reporting_instance].map(String::as_str));
    join(&parts)
}

/// Everything including the message: events with this key are "the same".
/// (client-go puts the field path before the uid; only equality matters.)
fn event_key(e: &EventRecord) -> String {
    let mut parts = object_parts(e);
    parts.extend([&e.involved_object.field_path, &e.type_, &e.reason, &e.message].map(String::as_str));
    join(&parts)
}

/// The spam filter's key: source and involved object only.
fn spam_key(e: &EventRecord) -> String {
    join(&object_parts(e))
}

#[derive(Debug)]
struct AggregateRecord {
    messages: HashSet<String>,
    last_seen: Instant,
}

#[derive(Debug)]
struct TokenBucket {
    tokens: f64,
    updated: Instant,
}

/// What the logger remembers of a written event to turn a repeat into a
/// patch.
#[derive(Debug, Clone)]
struct EventLog {
    count: i32,
    first_timestamp: Option<String>,
    name: Option<String>,
    resource_version: Option<String>,
}

impl EventLog {
    /// What to remember of `event`, as written or about to be.
    fn of(event: &EventRecord) -> Self {
        EventLog {
            count: event.count,
            first_timestamp: event.first_timestamp.clone(),
            name: event.metadata.name.clone(),
            resource_version: event.metadata.resource_version.clone(),
        }
    }
}

/// The outcome of [`EventCorrelator::correlate`] for one event.
#[derive(Debug, Clone, PartialEq)]
pub struct CorrelateResult {
    /// The event to write (possibly aggregated, possibly with a count > 1).
    pub event: DynamicObject,
    /// For a repeat (`count` > 1): the strategic merge patch of `count`,
    /// `lastTimestamp` and `message` to send instead of a create.
    pub patch: Option<serde_json::Value>,
}

/// [`CorrelateResult`] before the event is handed out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Correlated {
    pub event: EventRecord,
    pub patch: Option<serde_json::Value>,
}

/// Aggregation, count updates and spam filtering of events on their way to
/// a sink (client-go's `EventCorrelator`). The broadcaster keeps one per
/// sink; use it directly only to build a custom sink pipeline on
/// [`EventBroadcaster::watch`](super::EventBroadcaster::watch).
#[derive(Debug)]
pub struct EventCorrelator {
    opts: CorrelatorOptions,
    aggregates: Lru<AggregateRecord>,
    logs: Lru<EventLog>,
    buckets: Lru<TokenBucket>,
}

impl EventCorrelator {
    /// A correlator with empty caches, applying `opts`.
    pub fn new(opts: CorrelatorOptions) -> Self {
        let n = opts.lru_cache_size;
        EventCorrelator { opts, aggregates: Lru::new(n), logs: Lru::new(n), buckets: Lru::new(n) }
    }

    /// Decides what to write for `event`, a core/v1 Event as the
    /// broadcaster hands it out; `None` when the spam filter drops it, or
    /// when `event` does not read as an Event (a field of the wrong type),
    /// which is logged.
    #[doc(alias = "EventCorrelate")]
    pub fn correlate(&mut self, event: &DynamicObject) -> Option<CorrelateResult> {
        let record = read_event(event)?;
        let Correlated { event, patch } = self.correlate_record(record)?;
        Some(CorrelateResult { event: event.to_object(), patch })
    }

    /// Records what the server returned for a written event, so that the
    /// next repeat patches the right name and resourceVersion. An object
    /// that does not read as an Event is ignored, with a warning.
    #[doc(alias = "UpdateState")]
    pub fn update_state(&mut self, written: &DynamicObject) {
        if let Some(record) = read_event(written) {
            self.update_record(&record);
        }
    }

    /// [`correlate`](Self::correlate) on the record itself.
    pub(crate) fn correlate_record(&mut self, event: EventRecord) -> Option<Correlated> {
        let now = Instant::now();
        let wall = jiff::Timestamp::now();
        let (event, key) = self.aggregate(event, now, wall);
        let (event, patch) = self.observe(event, &key);
        if self.spam_filtered(&event, now) {
            return None;
        }
        Some(Correlated { event, patch })
    }

    /// [`update_state`](Self::update_state) with the record itself.
    pub(crate) fn update_record(&mut self, written: &EventRecord) {
        self.logs.insert(event_key(written), EventLog::of(written));
    }

    fn aggregate(&mut self, event: EventRecord, now: Instant, wall: jiff::Timestamp) -> (EventRecord, String) {
        let agg_key = aggregate_key(&event);
        let window = self.opts.max_interval;
        let fresh = || AggregateRecord { messages: HashSet::new(), last_seen: now };
        let record = match self.aggregates.touch(&agg_key) {
            Some(r) if now.saturating_duration_since(r.last_seen) <= window => r,
            Some(r) => {
                *r = fresh();
                r
            }
            None => {
                self.aggregates.insert(agg_key.clone(), fresh());
                match self.aggregates.touch(&agg_key) {
                    Some(r) => r,
                    // Only reachable with a zero-sized cache, which `Lru::new` rules out.
                    None => return (event.clone(), event_key(&event)),
                }
            }
        };
        record.messages.insert(event.message.clone());
        record.last_seen = now;
        if record.messages.len() < self.opts.max_events {
            let key = event_key(&event);
            return (event, key);
        }
        // Keep the set from growing without bound: the threshold is reached
        // and stays reached while similar events keep coming.
        if let Some(any) = record.messages.iter().next().cloned() {
            record.messages.remove(&any);
        }
        let stamp = format_time(wall);
        let name = unique_event_name(&event.involved_object.name, wall);
        let mut combined = EventRecord {
            involved_object: event.involved_object.clone(),
            reason: event.reason.clone(),
            message: format!("{COMBINED_MESSAGE_PREFIX}{}", event.message),
            source: event.source.clone(),
            first_timestamp: Some(stamp.clone()),
            last_timestamp: Some(stamp),
            count: 1,
            type_: event.type_.clone(),
            reporting_component: event.reporting_component.clone(),
            reporting_instance: event.reporting_instance.clone(),
            ..Default::default()
        };
        combined.metadata.name = Some(name);
        combined.metadata.namespace = event.metadata.namespace.clone();
        (combined, agg_key)
    }

    fn observe(&mut self, mut event: EventRecord, key: &str) -> (EventRecord, Option<serde_json::Value>) {
        let mut patch = None;
        if let Some(last) = self.logs.touch(key).filter(|l| l.count != 0).cloned() {
            event.count = last.count.saturating_add(1);
            event.first_timestamp = last.first_timestamp;
            event.metadata.name = last.name;
            event.metadata.resource_version = last.resource_version;
            patch = Some(serde_json::json!({
                "count": event.count,
                "lastTimestamp": event.last_timestamp,
                "message": event.message,
            }));
        }
        self.logs.insert(key.to_owned(), EventLog::of(&event));
        (event, patch)
    }

    /// Takes a token from the event's bucket; `true` when there was none.
    fn spam_filtered(&mut self, event: &EventRecord, now: Instant) -> bool {
        let key = spam_key(event);
        let burst = f64::from(self.opts.burst_size);
        if self.buckets.touch(&key).is_none() {
            self.buckets.insert(key.clone(), TokenBucket { tokens: burst, updated: now });
        }
        let qps = self.opts.qps.max(0.0);
        let Some(b) = self.buckets.touch(&key) else {
            return false;
        };
        let elapsed = now.saturating_duration_since(b.updated).as_secs_f64();
        b.tokens = (b.tokens + elapsed * qps).min(burst);
        b.updated = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            false
        } else {
            true
        }
    }
}

/// `obj` as an event record; `None`, logged, when a field has the wrong type.
fn read_event(obj: &DynamicObject) -> Option<EventRecord> {
    EventRecord::from_object(obj)
        .inspect_err(|e| tracing::warn!(event = ?obj.metadata.name, error = %crate::ErrorChain(e), "not a core/v1 Event, ignored"))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadcast::InvolvedObject;
    use crate::record::event::Source;

    fn ev(object: &str, reason: &str, message: &str) -> EventRecord {
        EventRecord {
            metadata: crate::dynamic::DynamicMeta {
                name: Some(format!("{object}.1")),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            involved_object: InvolvedObject {
                kind: "Pod".into(),
                namespace: "ns".into(),
                name: object.into(),
                uid: format!("uid-{object}"),
                api_version: "v1".into(),
                ..Default::default()
            },
            reason: reason.into(),
            message: message.into(),
            source: Source { component: "test".into(), host: String::new() },
            first_timestamp: Some("2024-01-01T00:00:00Z".into()),
            last_timestamp: Some("2024-01-01T00:00:00Z".into()),
            count: 1,
            type_: "Normal".into(),
            ..Default::default()
        }
    }

    fn roomy() -> CorrelatorOptions {
        // A bucket big enough that spam filtering stays out of the way.
        CorrelatorOptions { burst_size: 10_000, ..Default::default() }
    }

    #[tokio::test(start_paused = true)]
    async fn similar_events_aggregate_at_the_tenth_distinct_message() {
        let mut c = EventCorrelator::new(roomy());
        for i in 0..9 {
            let r = c.correlate_record(ev("p", "Failed", &format!("m{i}"))).unwrap();
            assert_eq!(r.event.message, format!("m{i}"));
            assert!(r.patch.is_none());
        }
        let r = c.correlate_record(ev("p", "Failed", "m9")).unwrap();
        assert_eq!(r.event.message, format!("{COMBINED_MESSAGE_PREFIX}m9"));
        assert_eq!(r.event.count, 1);
        assert!(r.patch.is_none());
        assert_ne!(r.event.metadata.name.as_deref(), Some("p.1"), "aggregate gets a fresh name");
        c.update_record(&EventRecord {
            metadata: crate::dynamic::DynamicMeta { resource_version: Some("7".into()), ..r.event.metadata.clone() },
            ..r.event.clone()
        });

        // Further similar events count up the one aggregate.
        let r2 = c.correlate_record(ev("p", "Failed", "m10")).unwrap();
        assert_eq!(r2.event.count, 2);
        assert_eq!(r2.event.metadata.name, r.event.metadata.name);
        assert_eq!(r2.patch.unwrap()["count"], 2);
        // A different reason is not similar.
        let other = c.correlate_record(ev("p", "Pulled", "m0")).unwrap();
        assert_eq!(other.event.message, "m0");
    }

    #[tokio::test(start_paused = true)]
    async fn repeats_do_not_count_towards_aggregation_and_window_expires() {
        let mut c = EventCorrelator::new(roomy());
        for i in 0..9 {
            c.correlate_record(ev("p", "Failed", &format!("m{i}"))).unwrap();
        }
        // Repeating a known message adds no distinct message.
        let r = c.correlate_record(ev("p", "Failed", "m0")).unwrap();
        assert_eq!(r.event.message, "m0");
        assert_eq!(r.event.count, 2);
        // After the window, the distinct messages are forgotten.
        tokio::time::advance(Duration::from_secs(601)).await;
        let r = c.correlate_record(ev("p", "Failed", "new")).unwrap();
        assert_eq!(r.event.message, "new");
    }

    #[tokio::test(start_paused = true)]
    async fn identical_event_becomes_count_patch() {
        let mut c = EventCorrelator::new(roomy());
        let first = c.correlate_record(ev("p", "Started", "hello")).unwrap();
        assert_eq!(first.event.count, 1);
        assert!(first.patch.is_none());
        let mut written = first.event.clone();
        written.metadata.resource_version = Some("42".into());
        c.update_record(&written);

        let mut again = ev("p", "Started", "hello");
        again.metadata.name = Some("p.2".into());
        again.last_timestamp = Some("2024-01-01T00:01:00Z".into());
        let r = c.correlate_record(again).unwrap();
        assert_eq!(r.event.count, 2);
        assert_eq!(r.event.metadata.name.as_deref(), Some("p.1"), "patches the first event");
        assert_eq!(r.event.metadata.resource_version.as_deref(), Some("42"));
        assert_eq!(r.event.first_timestamp.as_deref(), Some("2024-01-01T00:00:00Z"));
        assert_eq!(
            r.patch,
            Some(serde_json::json!({"count": 2, "lastTimestamp": "2024-01-01T00:01:00Z", "message": "hello"}))
        );
        let r3 = c.correlate_record(ev("p", "Started", "hello")).unwrap();
        assert_eq!(r3.event.count, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn spam_filter_allows_burst_then_one_per_five_minutes() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        // Distinct reasons so that aggregation does not interfere; the spam
        // key ignores the reason.
        let mut passed = 0;
        for i in 0..30 {
            if c.correlate_record(ev("p", &format!("r{i}"), "m")).is_some() {
                passed += 1;
            }
        }
        assert_eq!(passed, 25);
        // Another object has its own bucket.
        assert!(c.correlate_record(ev("q", "r0", "m")).is_some());
        tokio::time::advance(Duration::from_secs(299)).await;
        assert!(c.correlate_record(ev("p", "x", "m")).is_none(), "not yet refilled");
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(c.correlate_record(ev("p", "y", "m")).is_some(), "one token after 300 s");
        assert!(c.correlate_record(ev("p", "z", "m")).is_none());
        tokio::time::advance(Duration::from_secs(3000)).await;
        let refilled = (0..20).filter(|i| c.correlate_record(ev("p", &format!("s{i}"), "m")).is_some()).count();
        assert_eq!(refilled, 10, "ten tokens after 3000 s");
    }

    #[tokio::test(start_paused = true)]
    async fn public_api_takes_and_gives_event_objects() {
        let mut c = EventCorrelator::new(roomy());
        let first = c.correlate(&ev("p", "Started", "hello").to_object()).unwrap();
        assert_eq!((first.event.kind.as_str(), first.event.api_version.as_str()), ("Event", "v1"));
        assert_eq!(first.event.data["count"], 1);
        assert!(first.patch.is_none());
        let mut written = first.event.clone();
        written.metadata.resource_version = Some("3".into());
        c.update_state(&written);
        let again = c.correlate(&ev("p", "Started", "hello").to_object()).unwrap();
        assert_eq!(again.event.data["count"], 2);
        assert_eq!(again.event.resource_version(), Some("3"));
        assert_eq!(again.patch.unwrap()["count"], 2);

        let not_an_event = first.event.with_data(serde_json::json!({"reason": 7}));
        assert!(c.correlate(&not_an_event).is_none());
        c.update_state(&not_an_event);
    }

    #[test]
    fn lru_evicts_least_recently_used() {
        let mut l = Lru::new(2);
        l.insert("a".into(), 1);
        l.insert("b".into(), 2);
        assert!(l.touch("a").is_some());
        l.insert("c".into(), 3);
        assert_eq!(l.len(), 2);
        assert!(l.touch("b").is_none());
        assert!(l.touch("a").is_some() && l.touch("c").is_some());
    }
}
