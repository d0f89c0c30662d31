//! Names for the types defined inline in other schemas (every object of a
//! CRD below its root), and one type for identical ones.
//!
//! Two inline types of the same owner under properties of the same name and
//! with the same fields (docs aside) are one type, named after the
//! shallowest: CRDs repeat shapes such as `matchExpressions` under every
//! affinity term, or a route's `filters` under its rules and under each
//! backend. Names come from [`naming::nested_type_candidates`]: the first
//! free one, shallower types first so that they get the shorter names.

use std::collections::{BTreeMap, BTreeSet};

use super::Nested;
use crate::ir::{Api, Shape, TypeDef};
use crate::naming;

/// Names every inline type, merges identical ones and adds them to `api`.
pub fn resolve(api: &mut Api, nested: Vec<Nested>) {
    let owner_name = |n: &Nested| api.types.get(&n.owner).map(|d| d.rust_name.clone()).unwrap_or_default();
    let mut items: Vec<(String, Nested)> = nested.into_iter().map(|n| (owner_name(&n), n)).collect();

    // Merge bottom-up, so that a parent is compared with its children
    // already merged: one class per (owner, last property name, fields),
    // named after its shallowest member.
    items.sort_by(|(oa, a), (ob, b)| {
        b.segments.len().cmp(&a.segments.len()).then(oa.cmp(ob)).then(a.segments.cmp(&b.segments))
    });
    let mut class_of: BTreeMap<String, String> = BTreeMap::new();
    // Keyed by the fields' debug text: a total order Shape does not have.
    let mut classes: BTreeMap<(Vec<String>, String, String, String), String> = BTreeMap::new();
    let mut representative: BTreeMap<String, usize> = BTreeMap::new();
    for index in 0..items.len() {
        rewrite_shape(&mut items[index].1.def.shape, &class_of);
        let (_, item) = &items[index];
        let last = item.segments.last().cloned().unwrap_or_default();
        let key = (item.def.module.clone(), item.owner.clone(), last, format!("{:?}", without_docs(&item.def.shape)));
        let class = classes.entry(key).or_insert_with(|| item.def.schema_name.clone()).clone();
        class_of.insert(item.def.schema_name.clone(), class.clone());
        // Items come deepest first: a later member is at most as deep, and
        // replaces the representative only when shallower.
        let depth = items[index].1.segments.len();
        representative
            .entry(class)
            .and_modify(|rep| {
                if depth < items[*rep].1.segments.len() {
                    *rep = index;
                }
            })
            .or_insert(index);
    }
    let keep: BTreeSet<usize> = representative.values().copied().collect();
    let rep_key: BTreeMap<String, String> =
        representative.iter().map(|(class, i)| (class.clone(), items[*i].1.def.schema_name.clone())).collect();
    let final_key: BTreeMap<String, String> =
        class_of.iter().map(|(key, class)| (key.clone(), rep_key[class].clone())).collect();
    let mut kept: Vec<(String, Nested)> =
        items.into_iter().enumerate().filter(|(i, _)| keep.contains(i)).map(|(_, item)| item).collect();

    // Name top-down, so that shallower types get the shorter names.
    kept.sort_by(|(oa, a), (ob, b)| {
        a.segments.len().cmp(&b.segments.len()).then(oa.cmp(ob)).then(a.segments.cmp(&b.segments))
    });
    let mut taken: BTreeSet<(Vec<String>, String)> =
        api.types.values().map(|d| (d.module.clone(), d.rust_name.clone())).collect();
    for (owner, item) in &mut kept {
        let module = item.def.module.clone();
        let candidates = naming::nested_type_candidates(owner, &item.segments);
        let full = candidates.last().cloned().unwrap_or_default();
        // When every shortened name is taken and the full name is over twice
        // the limit (a path of many equal segments), the shortest name is
        // numbered instead.
        let too_long = full.len() > 2 * naming::LONG_TYPE_NAME && candidates.len() > 1;
        let pool = if too_long { &candidates[..candidates.len() - 1] } else { &candidates[..] };
        let free = pool.iter().find(|c| !taken.contains(&(module.clone(), (*c).clone()))).cloned();
        let name = free.unwrap_or_else(|| {
            let base = if too_long { candidates[0].clone() } else { full.clone() };
            (2..).map(|n| format!("{base}_{n}")).find(|c| !taken.contains(&(module.clone(), c.clone()))).unwrap_or(full)
        });
        taken.insert((module, name.clone()));
        item.def.rust_name = name;
    }

    for def in api.types.values_mut() {
        rewrite_shape(&mut def.shape, &final_key);
    }
    for (_, item) in kept {
        let mut def: TypeDef = item.def;
        rewrite_shape(&mut def.shape, &final_key);
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
