//! Types a crate of custom resources takes from the Kubernetes crate
//! (`k8s-client`) instead of generating copies: the metadata every object
//! has, the value types CRD schemas spell inline (`date-time`,
//! `x-kubernetes-int-or-string`), the `Scale` of the scale subresource, and
//! the shapes controllers copy from apimachinery into their CRDs
//! (`metav1.Condition`, `metav1.LabelSelector`).
//!
//! An inline object whose properties, types and required set equal one of
//! the [`reusable`] shapes *is* that type: the CRD crate names
//! `k8s_client::apimachinery::pkg::apis::meta::v1::Condition` instead of a
//! `FooStatusConditions` copy. The table is checked against the pinned
//! Kubernetes spec by a unit test.

use crate::ir::{Field, FieldType, Gvk, LABEL_SELECTOR, LIST_META, MapType, OBJECT_META, Shape, Special, TypeDef};
use crate::naming;

/// `metav1.Condition`, the status condition controllers copy into their
/// CRDs.
pub const CONDITION: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Condition";
/// `metav1.LabelSelectorRequirement`, one `matchExpressions` entry.
pub const LABEL_SELECTOR_REQUIREMENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement";
/// `autoscaling/v1` `Scale`, the body of every CRD's `scale` subresource.
pub const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";
/// `metav1.Status`, what a custom resource's delete and deletecollection
/// answer.
pub const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
/// `metav1.OwnerReference`, an entry of `metadata.ownerReferences`.
pub const OWNER_REFERENCE: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference";

fn field(json: &str, ty: FieldType, required: bool) -> Field {
    Field {
        json_name: json.to_owned(),
        rust_name: naming::field_name(json),
        ty,
        required,
        nullable: false,
        doc: None,
        boxed: false,
        flatten: false,
        merge: Default::default(),
        keywords: Default::default(),
    }
}

fn r(schema: &str) -> FieldType {
    FieldType::Ref(schema.to_owned())
}

/// Inline shapes that are reused as the apimachinery type they copy, most
/// nested first (a selector's requirements are matched before the selector).
pub fn reusable() -> Vec<(&'static str, Vec<Field>)> {
    vec![
        (
            LABEL_SELECTOR_REQUIREMENT,
            vec![
                field("key", FieldType::String, true),
                field("operator", FieldType::String, true),
                field("values", FieldType::Array(Box::new(FieldType::String)), false),
            ],
        ),
        (
            LABEL_SELECTOR,
            vec![
                field("matchExpressions", FieldType::Array(Box::new(r(LABEL_SELECTOR_REQUIREMENT))), false),
                field("matchLabels", FieldType::Map(Box::new(FieldType::String)), false),
            ],
        ),
        (
            CONDITION,
            vec![
                field("lastTransitionTime", r(super::TIME), true),
                field("message", FieldType::String, true),
                field("observedGeneration", FieldType::I64, false),
                field("reason", FieldType::String, true),
                field("status", FieldType::String, true),
                field("type", FieldType::String, true),
            ],
        ),
    ]
}

/// The Kubernetes crate's types a custom-resource crate may name, as
/// external definitions: paths and features by the public naming rule,
/// shapes where the generator looks at them.
pub fn external_types() -> Vec<TypeDef> {
    let def = |schema: &str, shape: Shape, gvk: Option<Gvk>| {
        let (module, rust_name) = naming::schema_path(schema);
        TypeDef {
            schema_name: schema.to_owned(),
            feature: naming::module_feature(&module),
            module,
            rust_name: rust_name.unwrap_or_default(),
            source: String::new(),
            doc: None,
            gvks: gvk.iter().cloned().collect(),
            gvk,
            shape,
            owner: None,
            external: true,
            // As the spec has them: a selector and an owner reference are
            // replaced whole.
            map_type: [LABEL_SELECTOR, OWNER_REFERENCE].contains(&schema).then_some(MapType::Atomic),
            declared_at: None,
            keywords: Default::default(),
        }
    };
    let type_meta = |fields: Vec<Field>| {
        let mut all = vec![field("apiVersion", FieldType::String, false), field("kind", FieldType::String, false)];
        all.extend(fields);
        all.sort_by(|a, b| a.json_name.cmp(&b.json_name));
        Shape::Struct(all)
    };
    // The metadata fields whose builders a kind's apply configuration
    // offers itself (`crate::plan::apply::METADATA_DELEGATES`).
    let object_meta = {
        let string = || FieldType::String;
        let strings = || FieldType::Array(Box::new(FieldType::String));
        let mut fields = vec![
            field("annotations", FieldType::Map(Box::new(string())), false),
            field("creationTimestamp", r(super::TIME), false),
            field("deletionGracePeriodSeconds", FieldType::I64, false),
            field("deletionTimestamp", r(super::TIME), false),
            field("finalizers", strings(), false),
            field("generateName", string(), false),
            field("generation", FieldType::I64, false),
            field("labels", FieldType::Map(Box::new(string())), false),
            field("name", string(), false),
            field("namespace", string(), false),
            field("ownerReferences", FieldType::Array(Box::new(r(OWNER_REFERENCE))), false),
            field("resourceVersion", string(), false),
            field("uid", string(), false),
        ];
        fields.sort_by(|a, b| a.json_name.cmp(&b.json_name));
        Shape::Struct(fields)
    };
    let scale_gvk = Gvk { group: "autoscaling".into(), version: "v1".into(), kind: "Scale".into() };
    let mut out = vec![
        def(OBJECT_META, object_meta, None),
        def(OWNER_REFERENCE, Shape::Struct(Vec::new()), None),
        def(LIST_META, Shape::Struct(Vec::new()), None),
        def(STATUS, Shape::Struct(Vec::new()), None),
        def(super::TIME, Shape::Special(Special::Time), None),
        def(super::INT_OR_STRING, Shape::Special(Special::IntOrString), None),
        def(SCALE, type_meta(vec![field("metadata", r(OBJECT_META), false)]), Some(scale_gvk)),
    ];
    out.extend(reusable().into_iter().map(|(schema, fields)| def(schema, Shape::Struct(fields), None)));
    out
}

/// Whether `fields` (of an inline object) are exactly `candidate`'s, docs
/// aside; a string enum counts as a string, which the reused type holds.
pub fn same_fields(fields: &[Field], candidate: &[Field], is_string_enum: impl Fn(&str) -> bool) -> bool {
    fields.len() == candidate.len()
        && fields.iter().zip(candidate).all(|(a, b)| {
            let ty_matches =
                a.ty == b.ty || (b.ty == FieldType::String && matches!(&a.ty, FieldType::Ref(r) if is_string_enum(r)));
            a.json_name == b.json_name && ty_matches && a.required == b.required && a.nullable == b.nullable
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table says what the pinned Kubernetes spec says.
    #[test]
    fn reusable_shapes_match_the_kubernetes_spec() {
        let specs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/kubernetes/1.37");
        let docs = crate::spec::load_dir(&specs).unwrap();
        let api = crate::spec::build(&docs).unwrap();
        for (schema, fields) in reusable() {
            let Shape::Struct(real) = &api.types[schema].shape else { panic!("{schema} is not a struct") };
            assert!(same_fields(&fields, real, |_| false), "{schema}: table {fields:#?}\nspec {real:#?}");
        }
        // A custom-resource crate names their apply configurations as the
        // Kubernetes crate does, unnumbered.
        let apply_names = crate::plan::apply::apply_names(&api);
        for def in external_types().iter().filter(|d| matches!(d.shape, Shape::Struct(_))) {
            assert_eq!(apply_names[def.schema_name.as_str()], format!("{}Apply", def.rust_name));
        }
        for def in external_types() {
            let real = &api.types[&def.schema_name];
            assert_eq!((&def.module, &def.rust_name, &def.feature), (&real.module, &real.rust_name, &real.feature));
            assert_eq!(def.map_type, real.map_type, "{}", def.schema_name);
            // The fields the table gives are the real ones.
            let (Shape::Struct(fields), Shape::Struct(real_fields)) = (&def.shape, &real.shape) else { continue };
            for f in fields {
                let same = real_fields.iter().find(|r| r.json_name == f.json_name);
                assert!(same.is_some_and(|r| r.ty == f.ty), "{}: {f:#?}\nspec {same:#?}", def.schema_name);
            }
        }
    }
}
