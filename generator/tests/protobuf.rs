//! The protobuf input: `.proto` files and Go facts mapped onto the IR, on a
//! small fixture (`tests/fixtures/protobuf`) and on the committed 1.37 specs.

use std::path::{Path, PathBuf};

use k8s_client_gen::ir::Api;
use k8s_client_gen::ir::proto::{Cardinality, Encodings, InlineStep, ProtoType, Scalar};
use k8s_client_gen::naming::GroupNames;
use k8s_client_gen::protobuf;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/protobuf")
}

fn build(specs: &Path) -> Api {
    let docs = k8s_client_gen::spec::load_dir(specs).unwrap();
    k8s_client_gen::spec::build(&docs).unwrap()
}

fn load(specs: &Path) -> k8s_client_gen::Result<Encodings> {
    let api = build(specs);
    Ok(protobuf::load(specs, &api)?.expect("the specs have proto/"))
}

/// A copy of the fixture with `edit` applied to one of its files.
fn edited_fixture(file: &str, edit: impl FnOnce(String) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let path = dir.path().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = edit(text.clone());
    assert_ne!(edited, text, "the edit of {file} changed nothing");
    std::fs::write(&path, edited).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

#[test]
fn fixture_maps_every_message_and_field() {
    let encodings = load(&fixture()).unwrap();
    let widget = &encodings.types["io.k8s.api.core.v1.Widget"];
    assert_eq!(widget.message, "k8s.io.api.core.v1.Widget");
    assert_eq!(widget.file, "proto/k8s.io/api/core/v1/generated.proto");
    // apiVersion and kind travel in the envelope.
    assert_eq!(widget.fields.keys().collect::<Vec<_>>(), ["metadata", "spec"]);
    let metadata = &widget.fields["metadata"];
    assert_eq!(metadata.number, 1);
    assert_eq!(metadata.ty, ProtoType::Message("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta".into()));

    let spec = &encodings.types["io.k8s.api.core.v1.WidgetSpec"].fields;
    let replicas = &spec["replicas"];
    assert_eq!((replicas.number, &replicas.ty), (1, &ProtoType::Scalar(Scalar::Int32)));
    assert!(replicas.go_pointer && replicas.omit_empty && replicas.inline.is_empty());
    assert_eq!(spec["labels"].cardinality, Cardinality::Map { key: Scalar::String });
    assert_eq!(spec["ports"].cardinality, Cardinality::Repeated { packed: false });
    let parts = &spec["parts"];
    assert_eq!(parts.ty, ProtoType::Message("k8s.io.api.core.v1.Part".into()));
    assert!(!parts.go_pointer && !parts.omit_empty);
    // A JSON-inlined struct's field, one message down on the wire.
    let host = &spec["host"];
    assert_eq!(host.number, 1);
    assert_eq!(
        host.inline,
        [InlineStep {
            number: 4,
            name: "widgetSource".into(),
            message: "k8s.io.api.core.v1.WidgetSource".into(),
            go_pointer: false
        }]
    );

    // Time's wire form is hand-written: its message, no fields.
    let time = &encodings.types["io.k8s.apimachinery.pkg.apis.meta.v1.Time"];
    assert!(time.fields.is_empty());
    let report = &encodings.report;
    assert_eq!(report.special, ["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]);
    assert_eq!(report.without_type, ["k8s.io.api.core.v1.Helper", "k8s.io.api.core.v1.WidgetSource"]);
    assert!(report.without_message.is_empty() && report.unmatched.is_empty());
    // Widget, WidgetSpec, Part, ObjectMeta, Time; 2 + 5 + 2 + 2 fields.
    assert_eq!((report.messages, report.fields), (5, 11));
    assert_eq!((report.reached_messages, report.reached_fields), (5, 11));
}

#[test]
fn plan_carries_the_message_and_field_numbers() {
    let specs = fixture();
    let mut api = build(&specs);
    api.protobuf = protobuf::load(&specs, &api).unwrap();
    let plan = k8s_client_gen::plan::plan(&api, &GroupNames::default()).unwrap();
    let spec = &plan.structs["io.k8s.api.core.v1.WidgetSpec"];
    assert_eq!(spec.message, Some("k8s.io.api.core.v1.WidgetSpec"));
    let numbers: Vec<(&str, u32)> =
        spec.fields.iter().map(|f| (f.field.json_name.as_str(), f.protobuf.expect("encoded").number)).collect();
    assert_eq!(numbers, [("host", 1), ("labels", 2), ("parts", 5), ("ports", 3), ("replicas", 1)]);

    // Without proto/ nothing is planned.
    let without = build(&specs);
    let plan = k8s_client_gen::plan::plan(&without, &GroupNames::default()).unwrap();
    let spec = &plan.structs["io.k8s.api.core.v1.WidgetSpec"];
    assert!(spec.message.is_none() && spec.fields.iter().all(|f| f.protobuf.is_none()));
}

#[test]
fn specs_without_proto_have_no_encodings() {
    let small = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small");
    assert!(protobuf::load(&small, &build(&small)).unwrap().is_none());
}

#[test]
fn schema_field_without_proto_field_names_both_files() {
    let dir =
        edited_fixture("api/v1.json", |t| t.replacen(r#""name": {"#, r#""colour": {"type": "string"}, "name": {"#, 1));
    let err = load(dir.path()).expect_err("colour has no proto field").to_string();
    let proto = dir.path().join("proto/k8s.io/api/core/v1/generated.proto");
    let document = dir.path().join("api/v1.json");
    assert!(err.contains(&proto.display().to_string()), "{err}");
    assert!(err.contains(&document.display().to_string()), "{err}");
    assert!(err.contains("message k8s.io.api.core.v1.Part for schema io.k8s.api.core.v1.Part"), "{err}");
    assert!(err.contains("field colour has no proto field"), "{err}");
}

#[test]
fn proto_field_without_schema_field_is_an_error() {
    let dir = edited_fixture("proto/k8s.io/api/core/v1/generated.proto", |t| {
        t.replace("optional int64 weight = 2;", "optional int64 weight = 2;\n  optional string colour = 3;")
    });
    let dir_facts = dir.path().join("proto/go-fields.json");
    // The Go facts must know the new field too, or the facts check fails first.
    let mut facts: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&dir_facts).unwrap()).unwrap();
    let fields = facts["messages"]["k8s.io.api.core.v1.Part"]["fields"].as_array_mut().unwrap();
    let mut colour = fields[0].clone();
    colour["number"] = 3.into();
    colour["name"] = "colour".into();
    colour["json"] = "colour".into();
    fields.push(colour);
    std::fs::write(&dir_facts, serde_json::to_string(&facts).unwrap()).unwrap();
    let err = load(dir.path()).expect_err("colour is not in the schema").to_string();
    assert!(err.contains("api/v1.json"), "{err}");
    assert!(err.contains("proto field colour = 3 (JSON colour) has no field in the schema"), "{err}");
}

#[test]
fn type_mismatch_is_an_error() {
    let dir = edited_fixture("proto/k8s.io/api/core/v1/generated.proto", |t| {
        t.replace("optional int64 weight = 2;", "optional string weight = 2;")
    });
    let err = load(dir.path()).expect_err("weight is an integer").to_string();
    assert!(err.contains("field weight = 2: the schema's I64 is a proto String"), "{err}");
}

#[test]
fn facts_disagreeing_with_the_proto_name_both_files() {
    let dir = edited_fixture("proto/k8s.io/api/core/v1/generated.proto", |t| {
        t.replace("optional int64 weight = 2;", "optional int64 weight = 7;")
    });
    let err = load(dir.path()).expect_err("numbers disagree").to_string();
    assert!(err.contains("generated.proto and "), "{err}");
    assert!(err.contains("go-fields.json"), "{err}");
    assert!(err.contains("message k8s.io.api.core.v1.Part: Go field weight (number 2) has no proto field"), "{err}");
}

#[test]
fn unparsable_proto_names_the_file() {
    let dir =
        edited_fixture("proto/k8s.io/api/core/v1/generated.proto", |t| t.replace("message Part {", "message Part"));
    let err = load(dir.path()).expect_err("not proto").to_string();
    assert!(err.contains("proto/k8s.io/api/core/v1/generated.proto"), "{err}");
}

#[test]
fn unreached_type_that_does_not_fit_is_listed() {
    // Helper is no kind and no kind holds it.
    let dir = edited_fixture("api/v1.json", |t| {
        t.replacen(
            r#""io.k8s.api.core.v1.Part": {"#,
            r#""io.k8s.api.core.v1.Helper": {"type": "object", "properties": {"other": {"type": "string"}}},
    "io.k8s.api.core.v1.Part": {"#,
            1,
        )
    });
    let facts = dir.path().join("proto/go-fields.json");
    let mut value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&facts).unwrap()).unwrap();
    value["messages"]["k8s.io.api.core.v1.Helper"] = serde_json::json!({"goType": "", "fields": [
        {"number": 1, "name": "note", "goName": "Note", "json": "note", "inline": false, "omitempty": true,
         "omitzero": false, "pointer": false, "kind": "string", "goType": "string", "tag": ""}]});
    std::fs::write(&facts, value.to_string()).unwrap();
    let encodings = load(dir.path()).unwrap();
    assert_eq!(
        encodings.report.unmatched,
        ["io.k8s.api.core.v1.Helper (k8s.io.api.core.v1.Helper): field other has no proto field"]
    );
}

/// Every message reached from a built-in kind of the committed 1.37 specs
/// maps with every field.
#[test]
fn kubernetes_1_37_maps_every_reached_type() {
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/kubernetes/1.37");
    let api = build(&specs);
    let encodings = protobuf::load(&specs, &api).unwrap().expect("1.37 has proto/");
    let report = &encodings.report;
    println!(
        "messages mapped: {} ({} reached from kinds), fields mapped: {} ({} reached), specials: {}, \
         messages without IR type: {}, reached structs without message: {}, unmatched unreached: {}",
        report.messages,
        report.reached_messages,
        report.fields,
        report.reached_fields,
        report.special.len(),
        report.without_type.len(),
        report.without_message.len(),
        report.unmatched.len(),
    );
    println!("specials: {:?}", report.special);
    println!("unmatched: {:?}", report.unmatched);
    assert!(report.without_message.is_empty(), "reached structs without a message: {:?}", report.without_message);
    assert!(report.unmatched.is_empty(), "{:?}", report.unmatched);
    // Every field of every reached struct has its encoding.
    let reached = protobuf::mapping::reached_from_kinds(&api);
    for schema in reached {
        let def = &api.types[schema];
        let k8s_client_gen::ir::Shape::Struct(fields) = &def.shape else { continue };
        let encoding = &encodings.types[schema];
        for f in fields {
            let envelope = !def.gvks.is_empty() && (f.json_name == "apiVersion" || f.json_name == "kind");
            assert!(envelope || encoding.fields.contains_key(&f.json_name), "{schema}.{} unmapped", f.json_name);
        }
    }
    let pod = &encodings.types["io.k8s.api.core.v1.Pod"];
    assert_eq!((pod.fields["metadata"].number, pod.fields["spec"].number, pod.fields["status"].number), (1, 2, 3));
    let volume = &encodings.types["io.k8s.api.core.v1.Volume"];
    assert_eq!(volume.fields["configMap"].inline[0].name, "volumeSource");
    let grace = &encodings.types["io.k8s.api.core.v1.PodSpec"].fields["terminationGracePeriodSeconds"];
    assert!(grace.go_pointer && grace.ty == ProtoType::Scalar(Scalar::Int64));
}

/// The codec impls are `#[inline]`, so the generated crate compiles none of
/// them itself: like the JSON codec, which is generic, a type's protobuf
/// decode and encode are compiled in the crate that uses them, and only
/// for the types it reaches. (Compiled eagerly, they tripled the release
/// build of the 1.37 crate with every group on.)
#[test]
fn codec_methods_are_compiled_where_used() {
    let opts = k8s_client_gen::emit::Options {
        crate_name: "fixture-client".into(),
        crate_version: None,
        runtime_path: Some("../runtime".into()),
        standalone: true,
        source_label: "fixture".into(),
        sources_in_label: false,
        client_path: Some("../generated".into()),
        group_names: Default::default(),
    };
    let output = k8s_client_gen::generate_from_dir(&fixture(), &opts).expect("fixture generates").output;
    let mut methods = 0;
    for (path, text) in &output.files {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (at, line) in lines.iter().enumerate() {
            let decode = line.starts_with("fn merge_field(") || line.starts_with("fn merge_from(");
            let encode = line.starts_with("fn encode_fields(&self,") && line.contains("protobuf::Writer");
            if decode || encode {
                methods += 1;
                assert_eq!(lines[at - 1], "#[inline]", "{}: `{line}` is not #[inline]", path.display());
            }
        }
    }
    assert!(methods >= 10, "only {methods} codec methods found in the fixture's output");
}
