use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::*;
use crate::cache::delta_fifo::{DeltaFifoOptions, DeltaType};
use crate::cache::list_watch::scripted::{Call, Scripted, Verb, api_error, page};
use crate::cache::store::ThreadSafeStore;
use crate::object::object_key;
use crate::rest::Bookmark;
use crate::testing::{Pod, pod};

fn pod_rv(name: &str, rv: &str) -> Pod {
    let mut p = pod("ns", name, "node");
    p.metadata.resource_version = Some(rv.to_owned());
    p
}

fn opts(watch_list: bool) -> ReflectorOptions {
    ReflectorOptions {
        use_watch_list: watch_list,
        backoff: BackoffConfig { jitter: 0.0, ..BackoffConfig::default() },
        ..ReflectorOptions::default()
    }
}

fn setup(watch_list: bool) -> (Arc<Scripted<Pod>>, DeltaFifo<Pod>, Reflector<Pod>) {
    let lw = Arc::new(Scripted::default());
    let fifo = DeltaFifo::new(DeltaFifoOptions::default());
    let r = Reflector::new(Arc::clone(&lw), fifo.clone(), opts(watch_list));
    (lw, fifo, r)
}

/// `r` with a watch error handler that counts the errors it is given.
fn counting_errors(r: Reflector<Pod>) -> (Reflector<Pod>, Arc<AtomicUsize>) {
    let reported = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&reported);
    let r = r.watch_error_handler(Arc::new(move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
    }));
    (r, reported)
}

fn end_bookmark(rv: &str) -> WatchEvent<Pod> {
    WatchEvent::Bookmark(Bookmark {
        resource_version: rv.to_owned(),
        annotations: BTreeMap::from([("k8s.io/initial-events-end".to_owned(), "true".to_owned())]),
    })
}

fn bookmark(rv: &str) -> WatchEvent<Pod> {
    WatchEvent::Bookmark(Bookmark { resource_version: rv.to_owned(), annotations: BTreeMap::new() })
}

/// Pops everything queued: key and delta types, sorted by key.
async fn drain(fifo: &DeltaFifo<Pod>) -> Vec<(String, Vec<DeltaType>)> {
    let mut out = Vec::new();
    while !fifo.is_empty() {
        let deltas = fifo.pop(|_, _| Ok(())).await.unwrap();
        let key = match &deltas[0].object {
            crate::cache::DeltaObject::Object(o) => object_key(&**o),
            crate::cache::DeltaObject::DeletedFinalStateUnknown(t) => t.key.clone(),
        };
        out.push((key, deltas.iter().map(|d| d.delta_type).collect()));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn rv_of(c: &Call) -> Option<&str> {
    c.opts.resource_version.as_deref()
}

/// Runs `r` with paused time for `secs` of virtual time, then stops it.
async fn run_for(r: Reflector<Pod>, secs: u64) {
    let cancel = CancellationToken::new();
    let task = tokio::spawn(r.run(cancel.clone()));
    tokio::time::sleep(Duration::from_secs(secs)).await;
    cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn first_list_pages_with_limit_and_continue_then_watches() {
    let (lw, fifo, mut r) = setup(false);
    lw.push_list(Ok(page(vec![pod_rv("a", "3"), pod_rv("b", "4")], "10", Some("tok"))));
    lw.push_list(Ok(page(vec![pod_rv("c", "5")], "10", None)));
    lw.push_watch(vec![], true);

    assert_eq!(r.phase(), Phase::Start);
    r.step().await;
    assert_eq!(r.phase(), Phase::List);
    r.step().await;
    assert_eq!(r.phase(), Phase::Watch);
    assert_eq!(r.last_sync_resource_version(), "10");
    r.step().await;
    assert_eq!(r.phase(), Phase::Watching);

    let calls = lw.calls();
    assert_eq!(calls.len(), 3);
    assert_eq!((calls[0].verb, rv_of(&calls[0]), calls[0].opts.limit), (Verb::List, Some("0"), Some(500)));
    assert_eq!(calls[0].opts.resource_version_match, None);
    assert_eq!(calls[1].opts.continue_token.as_deref(), Some("tok"));
    assert_eq!((rv_of(&calls[1]), calls[1].opts.limit), (None, Some(500)));
    let w = &calls[2];
    assert_eq!((w.verb, rv_of(w), w.opts.allow_watch_bookmarks), (Verb::Watch, Some("10"), true));
    let timeout = w.opts.timeout_seconds.unwrap();
    assert!((300..600).contains(&timeout), "{timeout}");
    assert_eq!(w.opts.send_initial_events, None);

    let queued = drain(&fifo).await;
    let keys: Vec<_> = queued.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["ns/a", "ns/b", "ns/c"]);
    assert!(queued.iter().all(|(_, t)| t == &[DeltaType::Replaced]));
}

#[tokio::test(start_paused = true)]
async fn expired_continue_token_falls_back_to_one_full_list() {
    let (lw, fifo, mut r) = setup(false);
    lw.push_list(Ok(page(vec![pod_rv("a", "3")], "10", Some("tok"))));
    lw.push_list(Err(api_error(410, "Expired")));
    lw.push_list(Ok(page(vec![pod_rv("a", "3"), pod_rv("b", "12")], "12", None)));
    r.step().await;
    r.step().await;
    assert_eq!(r.phase(), Phase::Watch);
    let calls = lw.calls();
    assert_eq!(calls.len(), 3);
    let full = &calls[2];
    assert_eq!((full.opts.limit, full.opts.continue_token.as_deref(), rv_of(full)), (None, None, Some("0")));
    assert_eq!(r.last_sync_resource_version(), "12");
    // The full list replaces the pages read so far: no duplicate of "a".
    assert_eq!(drain(&fifo).await.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn gone_watch_relists_at_last_rv_and_expired_list_retries_at_empty_rv() {
    let (lw, fifo, r) = setup(false);
    let (r, errors) = counting_errors(r);
    lw.push_list(Ok(page(vec![pod_rv("a", "3")], "10", None)));
    lw.push_watch(vec![Ok(WatchEvent::Added(pod_rv("b", "11"))), Err(api_error(410, "Expired"))], false);
    lw.push_list(Err(api_error(410, "Expired")));
    lw.push_list(Ok(page(vec![pod_rv("b", "11")], "20", None)));
    lw.push_watch(vec![], true);
    run_for(r, 10).await;

    let calls = lw.calls();
    let summary: Vec<_> = calls.iter().map(|c| (c.verb, rv_of(c), c.opts.limit)).collect();
    assert_eq!(
        summary,
        [
            (Verb::List, Some("0"), Some(500)),
            (Verb::Watch, Some("10"), None),
            // At the last synced version and unpaged, so the watch cache serves it.
            (Verb::List, Some("11"), None),
            // The server forgot that version: a consistent read.
            (Verb::List, Some(""), Some(500)),
            (Verb::Watch, Some("20"), None),
        ]
    );
    // The relist waited for the first backoff step.
    assert_eq!(calls[2].at - calls[1].at, Duration::from_millis(800));
    assert_eq!(calls[3].at, calls[2].at);
    assert_eq!(errors.load(Ordering::SeqCst), 2);
    let queued = drain(&fifo).await;
    // "a" vanished in the relist; with no known objects the FIFO only
    // tombstones what is still queued.
    assert_eq!(queued[0], ("ns/a".into(), vec![DeltaType::Replaced, DeltaType::Deleted]));
}

#[tokio::test(start_paused = true)]
async fn too_large_resource_version_relists_at_empty_rv() {
    let (lw, _fifo, r) = setup(false);
    let mut status = crate::rest::Status { code: 504, reason: "Timeout".into(), ..Default::default() };
    status.details = Some(crate::rest::StatusDetails {
        causes: vec![crate::rest::StatusCause { reason: "ResourceVersionTooLarge".into(), ..Default::default() }],
        ..Default::default()
    });
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(vec![Err(api_error(410, "Gone"))], false);
    lw.push_list(Err(rest::Error::Api(Box::new(status))));
    lw.push_list(Ok(page(vec![], "30", None)));
    run_for(r, 5).await;
    let rvs: Vec<_> = lw.calls().iter().map(|c| (c.verb, rv_of(c).map(str::to_owned))).collect();
    assert_eq!(rvs[2..4], [(Verb::List, Some("10".into())), (Verb::List, Some(String::new()))]);
}

#[tokio::test(start_paused = true)]
async fn ended_watch_resumes_from_last_rv_without_relist() {
    let (lw, fifo, r) = setup(false);
    let rv = r.resource_version_handle();
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(vec![Ok(WatchEvent::Added(pod_rv("a", "11"))), Ok(WatchEvent::Modified(pod_rv("a", "12")))], false);
    lw.push_watch(vec![Ok(WatchEvent::Deleted(pod_rv("a", "13")))], true);
    run_for(r, 60).await;
    let calls = lw.calls();
    let summary: Vec<_> = calls.iter().map(|c| (c.verb, rv_of(c))).collect();
    assert_eq!(summary, [(Verb::List, Some("0")), (Verb::Watch, Some("10")), (Verb::Watch, Some("12"))]);
    assert_eq!(calls[2].at, calls[1].at, "no backoff after a normal end");
    assert_eq!(rv.get(), "13");
    assert_eq!(drain(&fifo).await, [("ns/a".into(), vec![DeltaType::Added, DeltaType::Updated, DeltaType::Deleted])]);
}

#[tokio::test(start_paused = true)]
async fn bookmarks_advance_the_resource_version() {
    let (lw, fifo, r) = setup(false);
    let rv = r.resource_version_handle();
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(vec![Ok(bookmark("15"))], false);
    lw.push_watch(vec![Ok(bookmark("17"))], true);
    run_for(r, 5).await;
    let calls = lw.calls();
    assert_eq!(rv_of(&calls[2]), Some("15"));
    assert_eq!(rv.get(), "17");
    assert!(drain(&fifo).await.is_empty(), "bookmarks queue nothing");
}

#[tokio::test(start_paused = true)]
async fn failures_back_off_800ms_doubling_to_30s() {
    let (lw, _fifo, r) = setup(false);
    for _ in 0..9 {
        lw.push_list(Err(api_error(500, "InternalError")));
    }
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(vec![], true);
    run_for(r, 200).await;
    let calls = lw.calls();
    let lists: Vec<_> = calls.iter().filter(|c| c.verb == Verb::List).collect();
    assert_eq!(lists.len(), 10);
    let gaps: Vec<u128> = lists.windows(2).map(|w| (w[1].at - w[0].at).as_millis()).collect();
    assert_eq!(gaps, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
    assert_eq!(calls.last().map(|c| c.verb), Some(Verb::Watch));
}

#[tokio::test(start_paused = true)]
async fn throttled_watch_start_retries_the_watch_only() {
    let (lw, _fifo, r) = setup(false);
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch_err(api_error(429, "TooManyRequests"));
    lw.push_watch(vec![], true);
    run_for(r, 5).await;
    let summary: Vec<_> = lw.calls().iter().map(|c| (c.verb, rv_of(c).map(str::to_owned))).collect();
    assert_eq!(
        summary,
        [(Verb::List, Some("0".into())), (Verb::Watch, Some("10".into())), (Verb::Watch, Some("10".into()))]
    );
}

#[tokio::test(start_paused = true)]
async fn very_short_empty_watch_backs_off_and_relists() {
    let (lw, _fifo, r) = setup(false);
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(vec![], false);
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(vec![], true);
    run_for(r, 5).await;
    let calls = lw.calls();
    assert_eq!(calls.iter().map(|c| c.verb).collect::<Vec<_>>(), [Verb::List, Verb::Watch, Verb::List, Verb::Watch]);
    assert_eq!(calls[2].at - calls[1].at, Duration::from_millis(800));
}

#[tokio::test(start_paused = true)]
async fn watch_list_replaces_at_initial_events_end_and_keeps_watching() {
    let (lw, fifo, mut r) = setup(true);
    lw.push_watch(
        vec![
            Ok(WatchEvent::Added(pod_rv("a", "5"))),
            Ok(WatchEvent::Added(pod_rv("b", "6"))),
            Ok(WatchEvent::Added(pod_rv("gone", "6"))),
            Ok(WatchEvent::Deleted(pod_rv("gone", "6"))),
            Ok(end_bookmark("7")),
            Ok(WatchEvent::Modified(pod_rv("a", "8"))),
        ],
        true,
    );
    r.step().await;
    assert_eq!(r.phase(), Phase::InitialEvents);
    for _ in 0..4 {
        r.step().await;
        assert_eq!(r.phase(), Phase::InitialEvents);
        assert!(fifo.is_empty(), "nothing is queued before the bookmark");
    }
    r.step().await;
    assert_eq!(r.phase(), Phase::Watching);
    assert_eq!(r.last_sync_resource_version(), "7");
    r.step().await;
    assert_eq!(r.last_sync_resource_version(), "8");

    let calls = lw.calls();
    assert_eq!(calls.len(), 1, "no list at all");
    let o = &calls[0].opts;
    assert_eq!(o.send_initial_events, Some(true));
    assert_eq!(o.resource_version_match, Some(VersionMatch::NotOlderThan));
    assert_eq!(o.resource_version.as_deref(), Some(""));
    assert!(o.allow_watch_bookmarks);
    assert_eq!(
        drain(&fifo).await,
        [("ns/a".into(), vec![DeltaType::Replaced, DeltaType::Updated]), ("ns/b".into(), vec![DeltaType::Replaced]),]
    );
}

/// As client-go 1.35: a rejected watch-list lists this round only; the
/// next round streams again.
#[tokio::test(start_paused = true)]
async fn rejected_watch_list_lists_this_round_and_streams_again_next_round() {
    let (lw, fifo, r) = setup(true);
    lw.push_watch_err(api_error(422, "Invalid"));
    lw.push_list(Ok(page(vec![pod_rv("a", "3")], "10", None)));
    lw.push_watch(vec![Ok(WatchEvent::Added(pod_rv("b", "11"))), Err(api_error(410, "Expired"))], false);
    lw.push_watch(vec![Ok(end_bookmark("12"))], true);
    run_for(r, 10).await;
    let summary: Vec<_> = lw.calls().iter().map(|c| (c.verb, c.opts.send_initial_events)).collect();
    assert_eq!(
        summary,
        [(Verb::Watch, Some(true)), (Verb::List, None), (Verb::Watch, None), (Verb::Watch, Some(true))]
    );
    assert!(!drain(&fifo).await.is_empty());
}

/// A watch-list stream that ends before its initial events did is streamed
/// again at once; one that ends within a second with nothing is a very
/// short watch, reported, and lists instead.
#[tokio::test(start_paused = true)]
async fn ended_watch_list_streams_again_unless_very_short() {
    let (lw, fifo, r) = setup(true);
    let (r, reported) = counting_errors(r);
    lw.push_watch(vec![Ok(WatchEvent::Added(pod_rv("partial", "5")))], false);
    lw.push_watch(vec![], false);
    lw.push_list(Ok(page(vec![pod_rv("a", "3")], "10", None)));
    lw.push_watch(vec![], true);
    run_for(r, 5).await;
    let calls = lw.calls();
    let summary: Vec<_> = calls.iter().map(|c| (c.verb, c.opts.send_initial_events)).collect();
    assert_eq!(
        summary,
        [(Verb::Watch, Some(true)), (Verb::Watch, Some(true)), (Verb::List, None), (Verb::Watch, None)]
    );
    assert_eq!(calls[1].at, calls[0].at, "streamed again at once");
    assert_eq!(calls[2].at, calls[1].at, "a very short watch-list lists at once");
    assert_eq!(reported.load(Ordering::SeqCst), 1, "the very short watch is reported");
    assert_eq!(drain(&fifo).await, [("ns/a".into(), vec![DeltaType::Replaced])]);
}

/// client-go's `isWatchErrorRetriable`: a watch-list answered 429 is tried
/// again as a watch-list after a backoff, never replaced by a list; the
/// backoff starts afresh once an attempt succeeds, and the wait is
/// readable while it lasts.
#[tokio::test(start_paused = true)]
async fn throttled_watch_list_retries_as_watch_list_with_a_backoff_reset_on_success() {
    let (lw, _fifo, mut r) = setup(true);
    let counters = r.counters();
    lw.push_watch_err(api_error(429, "TooManyRequests"));
    lw.push_watch_err(api_error(429, "TooManyRequests"));
    lw.push_watch(
        vec![Ok(end_bookmark("10")), Ok(WatchEvent::Added(pod_rv("a", "11"))), Err(api_error(500, "InternalError"))],
        false,
    );
    lw.push_watch(vec![Ok(end_bookmark("12"))], true);
    assert_eq!(counters.next_attempt_in(), None);
    r.step().await;
    assert_eq!(r.phase(), Phase::Backoff);
    assert_eq!(counters.next_attempt_in(), Some(Duration::from_millis(800)));
    tokio::time::advance(Duration::from_millis(300)).await;
    assert_eq!(counters.next_attempt_in(), Some(Duration::from_millis(500)));
    run_for(r, 10).await;
    assert_eq!(counters.next_attempt_in(), None);

    let calls = lw.calls();
    let summary: Vec<_> = calls.iter().map(|c| (c.verb, c.opts.send_initial_events)).collect();
    assert_eq!(summary, [(Verb::Watch, Some(true)); 4]);
    let gaps: Vec<u128> = calls.windows(2).map(|w| (w[1].at - w[0].at).as_millis()).collect();
    // 800 and 1600 ms after the two 429s; the error after a working watch
    // waits 800 ms again, not 3200.
    assert_eq!(gaps, [800, 1600, 800]);
    assert_eq!(counters.lists(), 0);
}

/// A watch-list at a version the server no longer has is retried at once
/// as a consistent read.
#[tokio::test(start_paused = true)]
async fn expired_watch_list_retries_at_once_from_empty_rv() {
    let (lw, _fifo, r) = setup(true);
    lw.push_watch(vec![Ok(end_bookmark("10")), Err(api_error(500, "InternalError"))], false);
    lw.push_watch_err(api_error(410, "Expired"));
    lw.push_watch(vec![Ok(end_bookmark("20"))], true);
    run_for(r, 5).await;
    let calls = lw.calls();
    let summary: Vec<_> =
        calls.iter().map(|c| (c.verb, c.opts.send_initial_events, rv_of(c).map(str::to_owned))).collect();
    assert_eq!(
        summary,
        [
            (Verb::Watch, Some(true), Some(String::new())),
            (Verb::Watch, Some(true), Some("10".into())),
            (Verb::Watch, Some(true), Some(String::new())),
        ]
    );
    assert_eq!(calls[2].at, calls[1].at);
}

#[tokio::test(start_paused = true)]
async fn transient_watch_list_failure_lists_now_and_tries_watch_list_next_round() {
    let (lw, _fifo, r) = setup(true);
    lw.push_watch(vec![Err(api_error(500, "InternalError"))], false);
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(vec![Err(api_error(410, "Expired"))], false);
    lw.push_watch(vec![Ok(end_bookmark("12"))], true);
    run_for(r, 5).await;
    let summary: Vec<_> =
        lw.calls().iter().map(|c| (c.verb, c.opts.send_initial_events, rv_of(c).map(str::to_owned))).collect();
    assert_eq!(
        summary,
        [
            (Verb::Watch, Some(true), Some(String::new())),
            (Verb::List, None, Some("0".into())),
            (Verb::Watch, None, Some("10".into())),
            (Verb::Watch, Some(true), Some("10".into())),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn resync_period_queues_sync_deltas_for_known_objects() {
    let known = Arc::new(ThreadSafeStore::default());
    known.add("ns/a".to_owned(), Arc::new(pod_rv("a", "3")));
    let fifo = DeltaFifo::new(DeltaFifoOptions::default().known_objects(known));
    let lw = Arc::new(Scripted::<Pod>::default());
    lw.push_list(Ok(page(vec![pod_rv("a", "3")], "10", None)));
    lw.push_watch(vec![], true);
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    let r = Reflector::new(
        Arc::clone(&lw),
        fifo.clone(),
        ReflectorOptions { resync_period: Duration::from_secs(30), ..opts(false) },
    )
    .should_resync(Arc::new(move || count.fetch_add(1, Ordering::SeqCst) > 0));
    let cancel = CancellationToken::new();
    let task = tokio::spawn(r.run(cancel.clone()));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(drain(&fifo).await, [("ns/a".into(), vec![DeltaType::Replaced])]);
    tokio::time::sleep(Duration::from_secs(64)).await;
    cancel.cancel();
    task.await.unwrap();
    // Asked at 30 s (declined) and 60 s (accepted).
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert_eq!(drain(&fifo).await, [("ns/a".into(), vec![DeltaType::Sync])]);
}

/// A watch whose connection broke (an EOF inside an event, a timeout) is
/// resumed from the last version at once, as a normal end: no relist, no
/// backoff, nothing reported. Only a bad event relists.
#[tokio::test(start_paused = true)]
async fn broken_watch_connection_resumes_without_relist_but_a_bad_event_relists() {
    let (lw, fifo, r) = setup(false);
    let (r, reported) = counting_errors(r);
    let counters = r.counters();
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(
        vec![Ok(WatchEvent::Added(pod_rv("a", "11"))), Err(rest::Error::WatchTruncated { buffered: 120 })],
        false,
    );
    lw.push_watch(
        vec![Ok(WatchEvent::Modified(pod_rv("a", "12"))), Err(rest::Error::Timeout(Duration::from_secs(30)))],
        false,
    );
    let decode = serde_json::from_str::<u8>("{").unwrap_err();
    lw.push_watch(
        vec![
            Ok(WatchEvent::Added(pod_rv("b", "13"))),
            Err(rest::Error::Decode { what: "ADDED object".into(), source: decode }),
        ],
        false,
    );
    lw.push_list(Ok(page(vec![pod_rv("a", "12"), pod_rv("b", "13")], "14", None)));
    lw.push_watch(vec![], true);
    run_for(r, 10).await;

    let calls = lw.calls();
    let summary: Vec<_> = calls.iter().map(|c| (c.verb, rv_of(c))).collect();
    assert_eq!(
        summary,
        [
            (Verb::List, Some("0")),
            (Verb::Watch, Some("10")),
            (Verb::Watch, Some("11")),
            (Verb::Watch, Some("12")),
            (Verb::List, Some("13")),
            (Verb::Watch, Some("14")),
        ]
    );
    assert_eq!(calls[2].at, calls[1].at, "no backoff after a broken connection");
    assert_eq!(calls[3].at, calls[2].at);
    assert_eq!(reported.load(Ordering::SeqCst), 1, "only the bad event is reported");
    assert_eq!((counters.lists(), counters.watch_lists(), counters.watches()), (2, 0, 4));
    assert_eq!(counters.full_loads(), 2);
    drop(fifo);
}

/// Watch-lists count as full loads; watches after them do not.
#[tokio::test(start_paused = true)]
async fn counters_tell_watch_lists_from_watches() {
    let (lw, _fifo, r) = setup(true);
    let counters = r.counters();
    lw.push_watch(vec![Ok(end_bookmark("10"))], false);
    lw.push_watch(vec![Ok(bookmark("11"))], true);
    run_for(r, 5).await;
    assert_eq!((counters.lists(), counters.watch_lists(), counters.watches()), (0, 1, 1));
    assert_eq!(counters.full_loads(), 1);
}

/// A watch-list whose connection breaks during the initial events is
/// streamed again from scratch (as client-go), not replaced by a list and
/// not reported; the partial objects are dropped.
#[tokio::test(start_paused = true)]
async fn broken_watch_list_connection_streams_the_initial_events_again() {
    let (lw, fifo, r) = setup(true);
    let (r, reported) = counting_errors(r);
    let counters = r.counters();
    lw.push_watch(
        vec![Ok(WatchEvent::Added(pod_rv("partial", "5"))), Err(rest::Error::WatchTruncated { buffered: 10 })],
        false,
    );
    lw.push_watch(vec![Ok(WatchEvent::Added(pod_rv("a", "6"))), Ok(end_bookmark("7"))], true);
    run_for(r, 5).await;
    let calls = lw.calls();
    let summary: Vec<_> = calls.iter().map(|c| (c.verb, c.opts.send_initial_events)).collect();
    assert_eq!(summary, [(Verb::Watch, Some(true)), (Verb::Watch, Some(true))]);
    assert_eq!(calls[1].at, calls[0].at, "no backoff after some events");
    assert_eq!(reported.load(Ordering::SeqCst), 0);
    assert_eq!((counters.lists(), counters.watch_lists()), (0, 2));
    assert_eq!(drain(&fifo).await, [("ns/a".into(), vec![DeltaType::Replaced])]);
}
