//! The structural-schema rules, node by node (cases checked against the
//! apiserver's `ValidateStructural`).

use serde_json::json;

fn check(schema: serde_json::Value) -> Option<(String, String)> {
    super::schema(&serde_json::from_value(schema).unwrap(), "").err()
}

#[test]
fn structural_schemas_pass() {
    let schema = json!({"type": "object", "properties": {
        "size": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "port": {"x-kubernetes-int-or-string": true,
                 "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "^[0-9]+$"}]},
        "open": {"x-kubernetes-preserve-unknown-fields": true},
        "mode": {"type": "string", "oneOf": [{"enum": ["a"]}, {"enum": ["b"]}]},
        "pair": {"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]},
        "list": {"type": "array", "items": {"type": "string"}}
    }});
    assert_eq!(check(schema), None);
}

#[test]
fn a_field_without_a_type_is_named() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "inline": {"properties": {"a": {"type": "string"}}}
    }}}});
    let (pointer, message) = check(schema).unwrap();
    assert_eq!(pointer, "/properties/spec/properties/inline/type");
    assert!(message.contains("specified object fields"), "{message}");
}

#[test]
fn an_array_without_items_is_named() {
    let schema = json!({"type": "object", "properties": {"steps": {"type": "array", "items": {"type": "array"}}}});
    assert_eq!(check(schema).unwrap().0, "/properties/steps/items/items");
}

#[test]
fn a_type_below_a_junctor_is_named() {
    let schema = json!({"type": "object", "properties": {"id": {
        "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
    }}});
    // The untyped field is found first, as the apiserver lists it too.
    assert_eq!(check(schema).unwrap().0, "/properties/id/type");
    let typed = json!({"type": "object", "properties": {"id": {"type": "string",
        "oneOf": [{"type": "string"}, {"format": "uuid"}]}}});
    assert_eq!(check(typed).unwrap().0, "/properties/id/oneOf/0/type");
    let deep = json!({"type": "object", "properties": {"m": {"type": "object",
        "anyOf": [{"properties": {"x": {"default": 1}}}]}}});
    assert_eq!(check(deep).unwrap().0, "/properties/m/anyOf/0/properties/x/default");
}

#[test]
fn the_root_is_an_object_without_additional_properties() {
    assert_eq!(check(json!({"type": "string"})).unwrap().0, "/type");
    assert_eq!(check(json!({"properties": {}})).unwrap().0, "/type");
    let open_root = json!({"type": "object", "additionalProperties": {"type": "string"}});
    assert_eq!(check(open_root).unwrap().0, "/additionalProperties");
}

#[test]
fn the_int_or_string_pattern_only_counts_exactly() {
    let loose = json!({"type": "object", "properties": {"n": {"x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string", "format": "byte"}]}}});
    assert_eq!(check(loose).unwrap().0, "/properties/n/anyOf/0/type");
}

/// What the apiserver checks but the code does not depend on (which
/// version is stored, conversion) is a warning among the notes; what the
/// code is made of stays an error.
mod storage_and_conversion {
    use std::path::Path;

    use crate::crd::Manifests;
    use crate::error::Error;

    const HEAD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
        metadata:\n  name: things.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  \
        names: {kind: Thing, plural: things}\n";
    const SCHEMA: &str = "    schema:\n      openAPIV3Schema: {type: object, properties: {spec: {type: object}}}\n";

    fn version(name: &str, served: bool, storage: bool) -> String {
        format!("  - name: {name}\n    served: {served}\n    storage: {storage}\n{SCHEMA}")
    }

    fn crd(extra_spec: &str, versions: &[String]) -> String {
        format!("{HEAD}{extra_spec}  versions:\n{}", versions.concat())
    }

    /// Reads `text` as the second document of `catalog/things.yaml`, after a ConfigMap.
    fn load(text: &str) -> crate::error::Result<Manifests> {
        let mut out = Manifests::default();
        let text = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\n{text}");
        out.add_text(&text, Path::new("catalog/things.yaml"), "catalog/things.yaml")?;
        Ok(out)
    }

    fn warnings(m: &Manifests) -> Vec<&str> {
        m.notes.iter().map(String::as_str).filter(|n| n.starts_with("warning: ")).collect()
    }

    /// The descriptions of the first document's schemas (the kind's and its list's).
    fn kind_doc(m: &Manifests) -> String {
        let schemas = m.documents[0].openapi.components.schemas.values();
        schemas.filter_map(|s| s.description.clone()).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn two_versions_none_stored_generate_with_a_warning() {
        let m = load(&crd("", &[version("v1", true, false), version("v2", true, false)])).unwrap();
        assert_eq!(m.documents.len(), 2);
        assert_eq!(
            warnings(&m),
            ["warning: catalog/things.yaml: document 1: /spec/versions: things.example.com: no version is \
                 marked as storage version (the apiserver requires exactly one); generated anyway"]
        );
    }

    #[test]
    fn two_versions_both_stored_generate_with_a_warning() {
        let m = load(&crd("", &[version("v1", true, true), version("v2", true, true)])).unwrap();
        assert_eq!(m.documents.len(), 2);
        assert_eq!(
            warnings(&m),
            ["warning: catalog/things.yaml: document 1: /spec/versions: things.example.com: 2 versions (v1, v2) \
                 are marked as storage version (the apiserver requires exactly one); generated anyway"]
        );
        // The kind's doc does not claim one of them is the storage version.
        let doc = kind_doc(&m);
        assert!(doc.contains("namespaced; stored as one of v1, v2."), "{doc}");
    }

    #[test]
    fn one_version_copied_out_unstored_generates_with_a_warning() {
        let m = load(&crd("", &[version("v1beta1", true, false)])).unwrap();
        assert_eq!(m.documents.len(), 1);
        let w = warnings(&m);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("warning: catalog/things.yaml: document 1: /spec/versions: "), "{}", w[0]);
        assert!(w[0].contains("no version is marked as storage version"), "{}", w[0]);
        let doc = kind_doc(&m);
        assert!(doc.contains("(example.com/v1beta1), namespaced."), "{doc}");
    }

    #[test]
    fn one_stored_version_has_no_warning() {
        let m = load(&crd("", &[version("v1", true, true), version("v2", false, false)])).unwrap();
        assert_eq!(m.documents.len(), 1);
        assert_eq!(warnings(&m), Vec::<&str>::new());
        assert!(m.notes.iter().any(|n| n.contains("things.example.com v2 is not served: skipped")), "{:?}", m.notes);
    }

    #[test]
    fn a_conversion_webhook_without_its_config_is_no_error() {
        // The apiserver refuses `strategy: Webhook` without `webhook`; the
        // code does not depend on conversion, which is not read.
        for conversion in ["  conversion:\n    strategy: Webhook\n", "  conversion: {strategy: Bogus, webhook: 3}\n"] {
            let m = load(&crd(conversion, &[version("v1", true, true)])).unwrap();
            assert_eq!(m.documents.len(), 1, "{conversion}");
            assert_eq!(warnings(&m), Vec::<&str>::new(), "{conversion}");
        }
    }

    #[test]
    fn what_the_code_is_made_of_stays_an_error() {
        let cases = [
            // A schema that is not structural, in a CRD that also has no storage version.
            (
                crd(
                    "",
                    &[version("v1", true, false).replace("{type: object}", "{type: object, oneOf: [{type: object}]}")],
                ),
                "/spec/versions/0/schema/openAPIV3Schema/properties/spec/oneOf/0/type: must not be set below",
            ),
            (
                crd("", &[version("v1", true, false)]).replace("{type: object, properties", "{properties"),
                "/spec/versions/0/schema/openAPIV3Schema/type: must not be empty at the root",
            ),
            // Bad names.
            (crd("", &[version("V1", true, true)]), "/spec/versions/0/name: version \"V1\" is not a DNS-1035 label"),
            (
                crd("", &[version("v1", true, false), version("v1", true, false)]),
                "/spec/versions/1/name: version \"v1\" is listed twice",
            ),
            (
                crd("", &[version("v1", true, true)]).replace("plural: things", "plural: Things"),
                "/spec/names/plural: plural \"Things\" is not a DNS-1035 label",
            ),
        ];
        for (text, expected) in cases {
            let err = load(&text).unwrap_err();
            assert!(matches!(&err, Error::Manifest { document: 1, .. }), "{err:?}");
            let message = err.to_string();
            assert!(message.starts_with("catalog/things.yaml: document 1: "), "{message}");
            assert!(message.contains(expected), "{expected}: {message}");
        }
    }
}
