//! The check that every name the plan gives is unique where it must be:
//! a group/version's accessor and module among the crate's, each item
//! of a group/version's modules (`clientset::<gv>`, `listers::<gv>`,
//! `informers::<gv>`) among that module's, and each apply configuration
//! (`<Type>Apply`) among the types of its type's module. The naming rules are meant to
//! make a clash impossible; when input still brings one about, this says
//! which groups or kinds clash, rather than writing a crate that does not
//! compile.

use std::collections::BTreeMap;

use super::{ExtensionOp, GroupVersionPlan, Plan};
use crate::error::{Error, Result};
use crate::ir::Api;
use crate::naming::GroupNames;

/// Fails on the first clash, naming both owners.
pub(super) fn check(api: &Api, plan: &Plan, names: &GroupNames) -> Result<()> {
    check_type_modules(api, plan)?;
    let mut groups: BTreeMap<&str, &str> = BTreeMap::new();
    for gv in plan.group_versions.values() {
        match groups.insert(&gv.module, &gv.group) {
            Some(other) if other != gv.group => {
                let (a, b) = (other.min(&gv.group), other.max(&gv.group));
                return Err(Error::Check(format!(
                    "the groups {a} and {b} both get the name {} for {}: name one of them with \
                     --group-name {b}=<name> (GROUP_NAMES=\"{b}=<name>\" with make crd)",
                    gv.module, gv.version
                )));
            }
            _ => {}
        }
    }
    for group in names.groups() {
        if !plan.group_versions.values().any(|gv| gv.group == group) {
            return Err(Error::Check(format!("--group-name names the group {group}, which the input does not serve")));
        }
    }
    for gv in plan.group_versions.values() {
        check_group_version(gv)?;
    }
    Ok(())
}

/// The types of each module of the crate and the apply configurations
/// beside them: a schema named `FooApply` beside `Foo` would take the name
/// of `Foo`'s apply configuration.
fn check_type_modules(api: &Api, plan: &Plan) -> Result<()> {
    let mut modules: BTreeMap<&[String], BTreeMap<&str, String>> = BTreeMap::new();
    for def in api.types.values().filter(|d| !d.external) {
        let owner = format!("the type {} (schema {})", def.rust_name, def.schema_name);
        modules.entry(&def.module).or_default().insert(&def.rust_name, owner);
    }
    for sp in plan.structs.values() {
        let Some(apply) = &sp.apply else { continue };
        let def = sp.def;
        let module = modules.entry(&def.module).or_default();
        let owner = format!("the apply configuration of {} (schema {})", def.rust_name, def.schema_name);
        if let Some(earlier) = module.get(apply.name.as_str()) {
            let at = if def.module.is_empty() { "the crate root".to_owned() } else { def.module.join("::") };
            return Err(Error::Check(format!("{earlier} and {owner} both get the name {} in {at}", apply.name)));
        }
        module.insert(&apply.name, owner);
    }
    Ok(())
}

/// The names one module of a group/version defines, each with the kind
/// (or the group/version itself) it is made for.
#[derive(Default)]
struct Module<'a> {
    what: &'static str,
    names: BTreeMap<String, String>,
    gv: &'a str,
}

impl Module<'_> {
    fn add(&mut self, name: &str, owner: String) -> Result<()> {
        match self.names.get(name) {
            Some(earlier) => Err(Error::Check(format!(
                "{} and {owner} of {} both get the name {name} in {}",
                earlier, self.gv, self.what
            ))),
            None => {
                self.names.insert(name.to_owned(), owner);
                Ok(())
            }
        }
    }
}

fn check_group_version(gv: &GroupVersionPlan) -> Result<()> {
    let module = |what| Module { what, names: BTreeMap::new(), gv: &gv.api_version };
    let (mut clients, mut methods, mut listers, mut informers) = (
        module("its clientset module"),
        module("its client"),
        module("its listers module"),
        module("its informers module"),
    );
    let group_version = || format!("the group/version {}", gv.api_version);
    clients.add(&format!("{}Client", gv.type_prefix), group_version())?;
    informers.add(&format!("{}Informers", gv.type_prefix), group_version())?;
    for c in &gv.clients {
        let kind = || format!("the kind {}", c.resource.kind);
        clients.add(&c.client_alias, kind())?;
        methods.add(&c.method, format!("{} ({})", kind(), c.resource.plural))?;
        if !c.extensions.is_empty() {
            clients.add(&c.ext_trait, kind())?;
        }
        // The struct is written once, with the text read.
        let text_reads = c.extensions.iter().filter(|e| e.item.op == ExtensionOp::Text);
        for params in text_reads.filter_map(|e| e.item.params.as_ref()) {
            clients.add(params, kind())?;
        }
        if c.informable {
            listers.add(&c.lister_alias, kind())?;
            if let Some(ns) = &c.namespace_lister_alias {
                listers.add(ns, kind())?;
            }
            informers.add(&c.informer_alias, kind())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Field, FieldType, Shape, TypeDef};

    fn def(name: &str) -> TypeDef {
        let field = Field {
            json_name: "x".into(),
            rust_name: "x".into(),
            ty: FieldType::String,
            required: false,
            nullable: false,
            doc: None,
            boxed: false,
            flatten: false,
            merge: Default::default(),
            keywords: Default::default(),
        };
        TypeDef {
            schema_name: format!("com.example.v1.{name}"),
            module: vec!["com".into(), "example".into(), "v1".into()],
            rust_name: name.into(),
            source: "test".into(),
            feature: None,
            doc: None,
            gvk: None,
            gvks: Vec::new(),
            shape: Shape::Struct(vec![field]),
            owner: None,
            external: false,
            map_type: None,
            declared_at: None,
            keywords: Default::default(),
        }
    }

    /// The plan numbers an apply configuration a type's name takes; were
    /// one still to clash, the check says which two items.
    #[test]
    fn an_apply_configuration_named_like_a_type_is_an_error_naming_both() {
        let mut api = Api::default();
        for d in [def("Foo"), def("FooApply")] {
            api.types.insert(d.schema_name.clone(), d);
        }
        let mut plan = super::super::plan(&api, &GroupNames::default()).unwrap();
        let foo = plan.structs.get_mut("com.example.v1.Foo").unwrap();
        assert_eq!(foo.apply.as_ref().unwrap().name, "FooApply_2");
        foo.apply.as_mut().unwrap().name = "FooApply".into();
        let err = check_type_modules(&api, &plan).unwrap_err().to_string();
        assert!(
            err.contains(
                "the type FooApply (schema com.example.v1.FooApply) and the apply configuration of Foo \
                 (schema com.example.v1.Foo) both get the name FooApply in com::example::v1"
            ),
            "{err}"
        );
    }
}
