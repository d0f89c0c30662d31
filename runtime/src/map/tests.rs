use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

#[test]
fn reads_like_a_btreemap() {
    let mut labels: Map = Map::from([("tier", "web"), ("app", "shop")]);
    assert_eq!(labels.len(), 2);
    assert_eq!(labels.get("app").map(|v| v.as_str()), Some("shop"));
    assert_eq!(labels["tier"], "web");
    assert!(labels.contains_key("tier") && !labels.contains_key("zone"));
    assert_eq!(labels.insert("app", "cart".into()).as_deref(), Some("shop"));
    assert_eq!(labels.insert(String::from("zone"), "a".into()), None);
    assert_eq!(labels.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["app", "tier", "zone"]);
    assert_eq!(labels.remove("tier").as_deref(), Some("web"));
    *labels.get_or_insert_with("count", LeanString::default) += "1";
    assert_eq!(format!("{labels:?}"), r#"{"app": "cart", "count": "1", "zone": "a"}"#);
    labels.retain(|k, _| k != "zone");
    assert_eq!(labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(), ["app=cart", "count=1"]);
}

#[test]
fn long_keys_decoded_in_two_maps_share_a_buffer() {
    let maps: Vec<Map> = serde_json::from_str(
        r#"[{"app.kubernetes.io/name": "web", "pod-template-hash": "7d9c8b5f6d"},
            {"app.kubernetes.io/name": "api", "pod-template-hash": "5f6d7d9c8b"}]"#,
    )
    .unwrap();
    let key = |m: &Map, i: usize| m.keys().nth(i).unwrap().as_ptr();
    assert_eq!(key(&maps[0], 0), key(&maps[1], 0));
    assert_eq!(key(&maps[0], 1), key(&maps[1], 1));
    assert_eq!(maps[1]["app.kubernetes.io/name"], "api");
}

#[test]
fn decodes_sorted_exactly_sized_the_last_of_equal_keys_winning() {
    let map: Map<i32> = serde_json::from_str(r#"{"b": 1, "a": 2, "b": 3, "c": 4}"#).unwrap();
    assert_eq!(map.iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>(), [("a", 2), ("b", 3), ("c", 4)]);
    assert_eq!(map.entries.capacity(), 3);
    let sorted: Map = serde_json::from_str(r#"{"app": "web", "tier": "frontend"}"#).unwrap();
    assert_eq!(sorted.entries.capacity(), 2);
    // Past the entries staged on the stack: still one block of exactly their number.
    let long: Map =
        serde_json::from_str(r#"{"h": "8", "g": "7", "f": "6", "e": "5", "d": "4", "c": "3", "b": "2", "a": "1"}"#)
            .unwrap();
    assert_eq!(long.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["a", "b", "c", "d", "e", "f", "g", "h"]);
    assert_eq!(long.entries.capacity(), 8);
    assert!(serde_json::from_str::<Map>("[]").unwrap_err().to_string().contains("a map"));
}

#[test]
fn encodes_as_a_btreemap_does() {
    let json = r#"{"z":"1","a":"2","m/n":"3"}"#;
    let ours: Map = serde_json::from_str(json).unwrap();
    let theirs: BTreeMap<String, String> = serde_json::from_str(json).unwrap();
    assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&theirs).unwrap());
    assert_eq!(Map::from(theirs.clone()), ours);
}

proptest! {
    /// Any sequence of inserts and removes leaves the map equal, entry for
    /// entry and in order, to a `BTreeMap` given the same sequence.
    #[test]
    fn behaves_as_a_btreemap(ops in proptest::collection::vec((any::<bool>(), "[a-d]{0,2}", any::<u8>()), 0..64)) {
        let mut ours = Map::new();
        let mut model = BTreeMap::new();
        for (insert, key, value) in ops {
            if insert {
                prop_assert_eq!(ours.insert(key.as_str(), value), model.insert(key, value));
            } else {
                prop_assert_eq!(ours.remove(&key), model.remove(&key));
            }
            prop_assert_eq!(ours.len(), model.len());
        }
        let ours_entries: Vec<_> = ours.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let model_entries: Vec<_> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
        prop_assert_eq!(&ours_entries, &model_entries);
        let rebuilt: Map<u8> = model.clone().into_iter().rev().collect();
        prop_assert_eq!(rebuilt, ours);
    }
}

/// Maps built through this thread's table of recent maps, as the decoder
/// builds them.
mod recent {
    use crate::intern::shared_map;
    use crate::read::Staged;

    use super::*;

    /// Entries already decoded, looked up as they are.
    fn shared<V: Clone + AsRef<str> + 'static>(mut entries: Staged<(LeanString, V)>) -> Map<V> {
        shared_map(&mut entries, |entries| Map::from_sorted(entries.drain(..)))
    }

    fn staged(pairs: &[(&str, &str)]) -> Staged<(LeanString, LeanString)> {
        pairs.iter().map(|&(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn an_equal_map_shares_the_array_and_a_different_one_does_not() {
        let labels = [("app", "web"), ("pod-template-hash", "7d9c8b5f6d")];
        let a = shared(staged(&labels));
        let b = shared(staged(&labels));
        assert_eq!(a, b);
        assert_eq!(a.entries.as_ptr(), b.entries.as_ptr(), "the second decode reuses the first array");
        let c = shared(staged(&[("app", "web"), ("pod-template-hash", "5f6d7d9c8b")]));
        assert_eq!(c.get("pod-template-hash").map(|v| v.as_str()), Some("5f6d7d9c8b"));
        assert_ne!(c.entries.as_ptr(), a.entries.as_ptr());
    }

    #[test]
    fn value_types_have_tables_of_their_own() {
        #[derive(Clone, PartialEq, Debug)]
        struct Quantity(LeanString);
        impl AsRef<str> for Quantity {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
        let text = shared(staged(&[("cpu", "100m")]));
        let quantity = shared::<Quantity>([("cpu".into(), Quantity("100m".into()))].into_iter().collect());
        assert_eq!(text["cpu"], "100m");
        assert_eq!(quantity["cpu"], Quantity("100m".into()));
        assert_eq!(shared::<Quantity>(staged_quantity()).entries.as_ptr(), quantity.entries.as_ptr());

        fn staged_quantity() -> Staged<(LeanString, Quantity)> {
            [("cpu".into(), Quantity("100m".into()))].into_iter().collect()
        }
    }

    #[test]
    fn large_maps_are_not_kept() {
        let long = "x".repeat(512);
        let big = [("note", long.as_str())];
        assert_ne!(shared(staged(&big)).entries.as_ptr(), shared(staged(&big)).entries.as_ptr());
        let keys: Vec<String> = (0..=16).map(|i| format!("k{i:02}")).collect();
        let many: Vec<(&str, &str)> = keys.iter().map(|k| (k.as_str(), "v")).collect();
        let (a, b) = (shared(staged(&many)), shared(staged(&many)));
        assert_eq!(a, b);
        assert_ne!(a.entries.as_ptr(), b.entries.as_ptr(), "over 16 entries: an array of its own");
        assert!(shared(staged(&[])).is_empty());
    }

    #[test]
    fn a_shared_map_changed_by_its_owner_is_copied_first() {
        let labels = [("app", "web"), ("tier", "frontend")];
        let mut mine = shared(staged(&labels));
        mine.insert("tier", "backend".into());
        *mine.get_mut("app").unwrap() = "api".into();
        let theirs = shared(staged(&labels));
        assert_eq!(theirs["tier"], "frontend", "the table's map is unchanged");
        assert_eq!(theirs["app"], "web");
        assert_eq!(mine["tier"], "backend");
        assert_eq!(mine["app"], "api");
    }
}
