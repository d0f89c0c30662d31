//! Every object of `shared/testdata/kubernetes-1.34` as the upstream Go
//! types write it in protobuf (`make proto-testdata`, run by `make test`:
//! `target/proto-testdata/<name>.pb`, and `<name>.json`, the same Go
//! object as JSON) decodes from protobuf into the generated Rust type,
//! encodes back to the same bytes, byte for byte, and agrees with the JSON
//! decode of the same object.

mod support;

use std::path::PathBuf;

use support::testdata::{first_difference, parse_name};

use k8s_client_runtime::protobuf::Envelope;

fn proto_testdata_dir() -> PathBuf {
    match std::env::var_os("PROTO_TESTDATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/proto-testdata"),
    }
}

#[test]
fn go_protobuf_round_trips_and_agrees_with_json() {
    let dir = proto_testdata_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!("no protobuf testdata at {} ({e}): run `make proto-testdata` (part of `make test`)", dir.display())
    });
    let mut files: Vec<String> =
        entries.map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|f| f.ends_with(".pb")).collect();
    files.sort();
    assert!(files.len() >= 150, "expected the Go-written protobuf testdata, found {} files", files.len());

    let (mut passed, mut failed, mut absent) = (Vec::new(), Vec::new(), Vec::new());
    for file in &files {
        let (group, version, kind) = parse_name(file, "pb").expect("testdata file name");
        let Some(entry) = k8s_client::scheme::find(&group, &version, &kind) else {
            absent.push(file.clone());
            continue;
        };
        let transcode = entry.transcode_protobuf.unwrap_or_else(|| panic!("{file}: a built-in kind without protobuf"));
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let envelope = match Envelope::decode(&bytes) {
            Ok(envelope) => envelope,
            Err(e) => {
                failed.push(format!("{file}: envelope: {e}"));
                continue;
            }
        };
        let (encoded, from_protobuf) = match transcode(envelope.raw) {
            Ok(result) => result,
            Err(e) => {
                failed.push(format!("{file}: decode failed: {}", k8s_client_runtime::ErrorChain(&*e)));
                continue;
            }
        };
        if encoded != envelope.raw {
            let at = encoded
                .iter()
                .zip(envelope.raw)
                .position(|(a, b)| a != b)
                .unwrap_or(encoded.len().min(envelope.raw.len()));
            failed.push(format!(
                "{file}: re-encoded bytes differ from Go's at byte {at} (Go wrote {}, we wrote {})",
                envelope.raw.len(),
                encoded.len()
            ));
            continue;
        }
        // The whole body, envelope included, is what the apiserver sends.
        let rewrapped = Envelope { raw: &encoded, ..envelope }.encode();
        if rewrapped != bytes {
            failed.push(format!("{file}: the re-encoded envelope differs from Go's"));
            continue;
        }
        // On the wire the kind is the envelope's; a type that holds
        // `apiVersion`/`kind` as data (`DeleteOptions`) has them from JSON
        // only, so they are compared here, through the envelope.
        // (A WatchEvent's envelope names no kind: Go's WatchEvent has no
        // TypeMeta.)
        if !envelope.kind.is_empty()
            && (envelope.api_version, envelope.kind) != (entry.api_version().as_str(), entry.kind)
        {
            failed.push(format!("{file}: envelope names {} {}", envelope.api_version, envelope.kind));
            continue;
        }
        let json = std::fs::read(dir.join(file.replace(".pb", ".json"))).unwrap();
        let without_type_meta = |mut value: serde_json::Value| {
            if let Some(object) = value.as_object_mut() {
                object.remove("apiVersion");
                object.remove("kind");
            }
            value
        };
        let from_protobuf = without_type_meta(from_protobuf);
        match (entry.transcode)(&json).map(without_type_meta) {
            Ok(from_json) if from_json == from_protobuf => passed.push(file.clone()),
            Ok(from_json) => failed.push(format!(
                "{file}: protobuf and JSON decode differently: {}",
                first_difference(&from_json, &from_protobuf, "")
            )),
            Err(e) => failed.push(format!("{file}: JSON decode failed: {e}")),
        }
    }
    println!(
        "protobuf round trip: {} passed, {} failed, {} kinds not in the generated crate: {:?}",
        passed.len(),
        failed.len(),
        absent.len(),
        absent
    );
    assert!(failed.is_empty(), "protobuf round trip failures ({}):\n{}", failed.len(), failed.join("\n"));
    // 86 of the testdata's kinds exist in 1.37 (as in the JSON round trip).
    assert!(passed.len() >= 86, "too few kinds matched: {}", passed.len());
}
