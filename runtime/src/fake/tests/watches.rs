//! Watches over the fake.

use std::time::Duration;

use futures_util::StreamExt as _;

use super::*;
use crate::rest::{ListOptions, VersionMatch, WatchEvent, WatchStream, WriteOptions};

async fn next(stream: &mut WatchStream<Pod>) -> WatchEvent<Pod> {
    tokio::time::timeout(Duration::from_secs(5), stream.next()).await.expect("an event in time").unwrap().unwrap()
}

fn name_of(event: &WatchEvent<Pod>) -> (&'static str, String) {
    match event {
        WatchEvent::Added(p) => ("ADDED", p.metadata.name.clone().unwrap_or_default()),
        WatchEvent::Modified(p) => ("MODIFIED", p.metadata.name.clone().unwrap_or_default()),
        WatchEvent::Deleted(p) => ("DELETED", p.metadata.name.clone().unwrap_or_default()),
        WatchEvent::Bookmark(b) => ("BOOKMARK", b.resource_version.clone()),
    }
}

#[tokio::test]
async fn watch_from_a_resource_version_sees_later_changes() {
    let fake = FakeCluster::new();
    let client = pods(&fake, "ns");
    let a = client.create(&pod("ns", "a", ""), &WriteOptions::default()).await.unwrap();
    let from = a.metadata.resource_version.clone().unwrap();
    client.create(&pod("ns", "b", ""), &WriteOptions::default()).await.unwrap();
    let mut a2 = a.clone();
    a2.node = "n1".into();
    client.update(&a2, &WriteOptions::default()).await.unwrap();
    pods(&fake, "other").create(&pod("other", "elsewhere", ""), &WriteOptions::default()).await.unwrap();
    let mut stream = client.watch(&ListOptions::default().resource_version(from)).await.unwrap();
    assert_eq!(name_of(&next(&mut stream).await), ("ADDED", "b".into()));
    assert_eq!(name_of(&next(&mut stream).await), ("MODIFIED", "a".into()));
    // Live changes arrive too.
    client.delete("b", &Default::default()).await.unwrap();
    assert_eq!(name_of(&next(&mut stream).await), ("DELETED", "b".into()));
    // Bookmarks on request.
    let current = ListOptions::default().resource_version(fake.resource_version().to_string()).bookmarks(true);
    let mut with_bookmarks = client.watch(&current).await.unwrap();
    fake.send_bookmarks();
    assert_eq!(name_of(&next(&mut with_bookmarks).await), ("BOOKMARK", fake.resource_version().to_string()));
}

#[tokio::test]
async fn watch_with_a_selector_sees_objects_enter_and_leave_it() {
    let fake = FakeCluster::new();
    let client = pods(&fake, "ns");
    let web = client.create(&labelled("ns", "p", &[("app", "db")]), &WriteOptions::default()).await.unwrap();
    let rv = web.metadata.resource_version.clone().unwrap();
    let mut stream = client.watch(&ListOptions::default().labels("app=web").resource_version(rv)).await.unwrap();
    let mut entering = web.clone();
    entering.metadata.labels = Some([("app", "web")].into_iter().collect());
    let entered = client.update(&entering, &WriteOptions::default()).await.unwrap();
    let mut leaving = entered.clone();
    leaving.metadata.labels = None;
    client.update(&leaving, &WriteOptions::default()).await.unwrap();
    assert_eq!(name_of(&next(&mut stream).await), ("ADDED", "p".into()));
    assert_eq!(name_of(&next(&mut stream).await), ("DELETED", "p".into()));
}

#[tokio::test]
async fn watch_list_sends_every_object_then_the_initial_events_end_bookmark() {
    let fake = FakeCluster::new();
    for name in ["a", "b"] {
        fake.add(&pod("ns", name, "")).unwrap();
    }
    let client = pods(&fake, "ns");
    let opts = ListOptions {
        send_initial_events: Some(true),
        resource_version_match: Some(VersionMatch::NotOlderThan),
        allow_watch_bookmarks: true,
        ..ListOptions::default()
    };
    let mut stream = client.watch(&opts).await.unwrap();
    assert_eq!(name_of(&next(&mut stream).await), ("ADDED", "a".into()));
    assert_eq!(name_of(&next(&mut stream).await), ("ADDED", "b".into()));
    let WatchEvent::Bookmark(end) = next(&mut stream).await else { panic!("expected the bookmark") };
    assert!(end.is_initial_events_end());
    assert_eq!(end.resource_version, fake.resource_version().to_string());
    client.create(&pod("ns", "c", ""), &WriteOptions::default()).await.unwrap();
    assert_eq!(name_of(&next(&mut stream).await), ("ADDED", "c".into()));
    // As the apiserver: sendInitialEvents needs NotOlderThan and bookmarks.
    let without_bookmarks = ListOptions { allow_watch_bookmarks: false, ..opts };
    let Err(refused) = client.watch(&without_bookmarks).await else { panic!("the watch was accepted") };
    assert!(refused.is_invalid(), "{refused}");
}

#[tokio::test]
async fn watch_from_before_the_compaction_is_expired() {
    let fake = FakeCluster::new();
    let client = pods(&fake, "ns");
    let a = client.create(&pod("ns", "a", ""), &WriteOptions::default()).await.unwrap();
    client.create(&pod("ns", "b", ""), &WriteOptions::default()).await.unwrap();
    fake.compact();
    let old = a.metadata.resource_version.unwrap();
    let mut stream = client.watch(&ListOptions::default().resource_version(old.clone())).await.unwrap();
    let error = tokio::time::timeout(Duration::from_secs(5), stream.next()).await.unwrap().unwrap().unwrap_err();
    assert!(error.is_gone() && error.is_resource_expired(), "{error}");
    let exact = ListOptions {
        resource_version: Some(old),
        resource_version_match: Some(VersionMatch::Exact),
        ..ListOptions::default()
    };
    assert!(client.list(&exact).await.unwrap_err().is_gone());
    // From the current version, watching works.
    let current = ListOptions::default().resource_version(fake.resource_version().to_string());
    let mut stream = client.watch(&current).await.unwrap();
    client.create(&pod("ns", "c", ""), &WriteOptions::default()).await.unwrap();
    assert_eq!(name_of(&next(&mut stream).await), ("ADDED", "c".into()));
}

#[tokio::test]
async fn close_watches_ends_open_streams() {
    let fake = FakeCluster::new();
    let client = pods(&fake, "ns");
    let mut stream = client.watch(&ListOptions::default()).await.unwrap();
    fake.close_watches();
    let end = tokio::time::timeout(Duration::from_secs(5), stream.next()).await.unwrap();
    assert!(end.is_none(), "{end:?}");
}
