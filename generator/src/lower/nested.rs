//! Names for the types defined inline in other schemas (every object of a
//! CRD below its root), and one type for identical ones.
//!
//! Names come from [`naming::nested_type_candidates`]: the first free one,
//! trying shallower types first so that they get the shorter names. Two
//! inline types of the same owner that would take the same first name and
//! have the same fields (docs aside) are one type: CRDs repeat shapes such
//! as `matchExpressions` under every affinity term.

use std::collections::{BTreeMap, BTreeSet};

use super::Nested;
use crate::ir::{Api, Shape, TypeDef};
use crate::naming;

/// Names every inline type, merges identical ones and adds them to `api`.
pub fn resolve(api: &mut Api, nested: Vec<Nested>) {
    let owner_name = |n: &Nested| api.types.get(&n.owner).map(|d| d.rust_name.clone()).unwrap_or_default();
    let mut items: Vec<(String, Nested)> = nested.into_iter().map(|n| (owner_name(&n), n)).collect();

    // Merge bottom-up, so that a parent compares its children after they
    // were merged.
    items.sort_by(|(oa, a), (ob, b)| {
        b.segments.len().cmp(&a.segments.len()).then(oa.cmp(ob)).then(a.segments.cmp(&b.segments))
    });
    let mut merged: BTreeMap<String, String> = BTreeMap::new();
    let mut seen: BTreeMap<(Vec<String>, String), (String, Shape)> = BTreeMap::new();
    let mut kept = Vec::new();
    for (owner, mut item) in items {
        rewrite_shape(&mut item.def.shape, &merged);
        let first = naming::nested_type_candidates(&owner, &item.segments).remove(0);
        let signature = without_docs(&item.def.shape);
        match seen.get(&(item.def.module.clone(), first.clone())) {
            Some((key, shape)) if *shape == signature => {
                merged.insert(item.def.schema_name.clone(), key.clone());
            }
            Some(_) => kept.push((owner, item)),
            None => {
                seen.insert((item.def.module.clone(), first), (item.def.schema_name.clone(), signature));
                kept.push((owner, item));
            }
        }
    }

    // Name top-down.
    kept.sort_by(|(oa, a), (ob, b)| {
        a.segments.len().cmp(&b.segments.len()).then(oa.cmp(ob)).then(a.segments.cmp(&b.segments))
    });
    let mut taken: BTreeSet<(Vec<String>, String)> =
        api.types.values().map(|d| (d.module.clone(), d.rust_name.clone())).collect();
    for (owner, item) in &mut kept {
        let module = item.def.module.clone();
        let candidates = naming::nested_type_candidates(owner, &item.segments);
        let free = candidates.iter().find(|c| !taken.contains(&(module.clone(), (*c).clone()))).cloned();
        let name = free.unwrap_or_else(|| {
            let full = candidates.last().cloned().unwrap_or_default();
            (2..).map(|n| format!("{full}_{n}")).find(|c| !taken.contains(&(module.clone(), c.clone()))).unwrap_or(full)
        });
        taken.insert((module, name.clone()));
        item.def.rust_name = name;
    }

    for def in api.types.values_mut() {
        rewrite_shape(&mut def.shape, &merged);
    }
    for (_, item) in kept {
        let mut def: TypeDef = item.def;
        rewrite_shape(&mut def.shape, &merged);
        api.types.insert(def.schema_name.clone(), def);
    }
}

fn rewrite_shape(shape: &mut Shape, merged: &BTreeMap<String, String>) {
    if merged.is_empty() {
        return;
    }
    if let Shape::Struct(fields) = shape {
        for f in fields {
            f.ty.rewrite_refs(&|r: &str| merged.get(r).cloned());
        }
    }
}

/// The shape compared when merging: fields without their docs.
fn without_docs(shape: &Shape) -> Shape {
    let mut shape = shape.clone();
    if let Shape::Struct(fields) = &mut shape {
        for f in fields {
            f.doc = None;
        }
    }
    shape
}
