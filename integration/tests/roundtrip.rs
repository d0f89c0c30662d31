//! Every fully populated object of `shared/testdata/kubernetes-1.34` whose
//! kind the generated crate has decodes into its Rust type, and into its
//! apply configuration, and encodes back to the same JSON.

mod support;

use std::path::PathBuf;

use k8s_client_runtime::object::{KindEntry, Transcode};
use support::testdata::{first_difference, parse_name};

fn testdata_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/kubernetes-1.34")
}

/// Objects written for 1.34 whose kind changed shape since: the field the
/// 1.37 schema dropped is lost on decode. Each must fail exactly this way.
const SCHEMA_SKEW: &[(&str, &str)] =
    &[("resource.k8s.io.v1alpha3.DeviceTaintRule.json", "/spec/deviceSelector/deviceClassName only in the first")];

/// What decoding and encoding every testdata object through `transcode`
/// (the scheme entry's codec of a kind, or of its apply configuration)
/// gives, checked: each comes back as it was, but for [`SCHEMA_SKEW`].
/// `what` names the types in the messages.
fn assert_testdata_round_trips(what: &str, transcode: fn(&KindEntry) -> Option<Transcode>) {
    let dir = testdata_dir();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("testdata missing at {}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.ends_with(".json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 182, "expected the 182 testdata objects");

    let (mut passed, mut failed, mut absent, mut skewed) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for file in &files {
        let (group, version, kind) = parse_name(file, "json").expect("testdata file name");
        let Some(entry) = k8s_client::scheme::find(&group, &version, &kind) else {
            absent.push(file.clone());
            continue;
        };
        let Some(transcode) = transcode(entry) else {
            failed.push(format!("{file}: no {what} for the kind"));
            continue;
        };
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let input: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        match transcode(&bytes) {
            Ok(output) if output == input => passed.push(file.clone()),
            Ok(output) => {
                let diff = first_difference(&input, &output, "");
                if SCHEMA_SKEW.contains(&(file.as_str(), diff.as_str())) {
                    skewed.push(file.clone());
                } else {
                    failed.push(format!("{file}: re-encoded JSON differs: {diff}"));
                }
            }
            Err(e) => failed.push(format!("{file}: decode failed: {e}")),
        }
    }
    println!(
        "round trip through {what}: {} passed, {} failed, {} lost a field the 1.37 schema dropped {:?}, {} kinds not in the generated crate: {:?}",
        passed.len(),
        failed.len(),
        skewed.len(),
        skewed,
        absent.len(),
        absent
    );
    assert!(failed.is_empty(), "round trip failures through {what}:\n{}", failed.join("\n"));
    assert_eq!(skewed.len(), SCHEMA_SKEW.len(), "a known schema skew no longer shows: update SCHEMA_SKEW");
    // 86 of the 182 kinds exist in 1.37 (1.35 had 91: 1.36 and 1.37 stopped
    // serving networking and storage v1beta1 and certificates v1alpha1);
    // fewer matches means the scheme lost kinds.
    assert!(passed.len() + skewed.len() >= 86, "too few kinds matched: {}", passed.len());
}

#[test]
fn testdata_round_trips_through_generated_types() {
    assert_testdata_round_trips("the generated types", |entry| Some(entry.transcode));
}

/// The apply configuration of a kind (`<Kind>Apply`, every field optional)
/// holds everything the kind does: a populated object read into it is
/// written back the same.
#[cfg(feature = "apply")]
#[test]
fn testdata_round_trips_through_apply_configurations() {
    assert_testdata_round_trips("the apply configurations", |entry| entry.transcode_apply);
}

/// The generated `Time`/`MicroTime`: an absent one costs no more than a
/// present one, and they build, read, order and encode as the README shows.
#[test]
fn generated_times_are_compact_and_read_as_timestamps() {
    use k8s_client::api::core::v1::PodCondition;
    use k8s_client::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
    use k8s_client_runtime::codec::{Timestamp, parse_time};

    assert_eq!(std::mem::size_of::<Option<Time>>(), std::mem::size_of::<Time>());
    assert_eq!(std::mem::size_of::<Option<MicroTime>>(), 16);

    let t = parse_time("2030-01-02T03:04:05.25Z").unwrap();
    assert_eq!(Time::new(t).timestamp(), t);
    assert_eq!(Timestamp::from(Time::from(t)), t);
    let earlier = Time::new(parse_time("1969-12-31T23:59:59.75Z").unwrap());
    assert!(earlier < Time::new(t) && earlier < Time::now());

    let ready = PodCondition {
        last_transition_time: Some(Time::new(t)),
        last_probe_time: Some(Time::default()),
        ..Default::default()
    };
    let json = serde_json::to_value(&ready).unwrap();
    assert_eq!(json["lastTransitionTime"], "2030-01-02T03:04:05.250Z");
    assert_eq!(json["lastProbeTime"], serde_json::Value::Null, "Go's zero time is written as null");
    let back: PodCondition = serde_json::from_value(json).unwrap();
    assert_eq!(back.last_transition_time.map(|t| t.timestamp().as_second()), Some(t.as_second()));

    let micro: MicroTime = serde_json::from_str(r#""2030-01-02T03:04:05Z""#).unwrap();
    assert_eq!(serde_json::to_string(&micro).unwrap(), r#""2030-01-02T03:04:05.000000Z""#);
}
