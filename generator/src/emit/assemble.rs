//! The files of a generated crate, assembled from the emitters' items:
//! one file per type, the module tree, the clientset, listers, informers,
//! scheme and prelude, Cargo.toml and README, and their writing into place.
//! Only the generator's command line and build scripts make crates (feature
//! `cli`); a derive renders items into the crate it expands in.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

use super::{
    GENERATOR, Options, Output, apply, clientset, crate_files, informers, listers, rust_file, scheme, tokens, types,
};
use crate::error::{Error, Result};
use crate::ir::Api;
use crate::naming;
use crate::plan::Plan;

/// Builds every file of the crate.
pub fn generate(api: &Api, plan: &Plan, opts: &Options) -> Result<Output> {
    let mut out = Output::default();
    let mut modules: BTreeMap<Vec<String>, ModuleContents> = BTreeMap::new();
    modules.entry(Vec::new()).or_default();

    // One file per top-level type; a type defined inline in another
    // schema lives in its owner's file.
    let mut files: BTreeMap<PathBuf, (String, TokenStream)> = BTreeMap::new();
    for def in api.types.values() {
        if def.external {
            continue;
        }
        let home = def.owner.as_ref().and_then(|o| api.types.get(o)).unwrap_or(def);
        let file_stem = naming::file_name(&home.rust_name);
        let tokens = types::emit_type(api, plan, def);
        let path = type_file(home);
        match files.get_mut(&path) {
            Some((_, existing)) if def.owner.is_some() => existing.extend(tokens),
            Some(_) => return Err(Error::Check(format!("two schemas map to the same file {}", path.display()))),
            None => {
                let source = opts.source_of(&home.source);
                files.insert(path, (source, tokens));
            }
        }
        for depth in 0..def.module.len() {
            let parent = def.module[..depth].to_vec();
            modules.entry(parent).or_default().children.insert(def.module[depth].clone());
        }
        let contents = modules.entry(def.module.clone()).or_default();
        if let Some(apply) = plan.structs.get(def.schema_name.as_str()).and_then(|sp| sp.apply.as_ref()) {
            contents.apply.entry(file_stem.clone()).or_default().push(apply.name.clone());
        }
        contents.types.entry(file_stem).or_default().push(def.rust_name.clone());
    }
    for (path, (source, tokens)) in files {
        let text = rust_file(&path.display().to_string(), &source, tokens)?;
        out.files.insert(path, text);
    }

    let root = modules.entry(Vec::new()).or_default();
    root.gated_modules.insert("scheme".to_owned(), "scheme".to_owned());
    root.extra_modules.extend(["clientset", "prelude"].map(str::to_owned));
    for module in ["informers", "listers"] {
        root.gated_modules.insert(module.to_owned(), crate::plan::INFORMERS.name.to_owned());
    }
    add_file(&mut out, "src/scheme.rs", &opts.source_label, scheme::emit_scheme(api, plan))?;

    for gv in plan.group_versions.values() {
        // Each group/version's file names the document its resources came from.
        let source = gv.clients.first().map(|c| opts.source_of(&c.resource.source));
        let source = source.as_deref().unwrap_or(&opts.source_label);
        add_file(&mut out, &format!("src/clientset/{}.rs", gv.module), source, clientset::emit_group_version(api, gv))?;
        if gv.has_informers() {
            add_file(&mut out, &format!("src/listers/{}.rs", gv.module), source, listers::emit_group_version(api, gv))?;
            add_file(
                &mut out,
                &format!("src/informers/{}.rs", gv.module),
                source,
                informers::emit_group_version(api, gv),
            )?;
        }
    }
    add_file(&mut out, "src/clientset/mod.rs", &opts.source_label, clientset::emit_clientset(plan))?;
    add_file(&mut out, "src/listers/mod.rs", &opts.source_label, listers::emit_root(plan))?;
    add_file(&mut out, "src/informers/mod.rs", &opts.source_label, informers::emit_root(plan))?;
    add_file(&mut out, "src/prelude.rs", &opts.source_label, crate_files::prelude(api, plan))?;

    for (module, contents) in &modules {
        contents.check_unique_names(module)?;
        let mut path = PathBuf::from("src");
        path.extend(module);
        path.push(if module.is_empty() { "lib.rs" } else { "mod.rs" });
        let text = if module.is_empty() {
            let derive = crate_files::has_derive(api, &crate_files::features(api));
            crate_files::lib_rs(opts, plan, derive, contents.child_items(module))?
        } else {
            rust_file(&path.display().to_string(), &opts.source_label, contents.child_items(module))?
        };
        out.files.insert(path, text);
    }

    let features = crate_files::features(api);
    let client_features = crate_files::client_features(api, plan);
    let runtime_features = plan.runtime_features();
    out.files.insert(
        PathBuf::from("Cargo.toml"),
        crate_files::cargo_toml(api, opts, &features, &client_features, &runtime_features)?,
    );
    out.files.insert(PathBuf::from("README.md"), crate_files::readme(api, opts, &features, &runtime_features)?);
    out.files.insert(PathBuf::from("rustfmt.toml"), crate_files::rustfmt_toml(&opts.source_label));
    check_one_type_per_schema(api, &out)?;
    Ok(out)
}

/// `src/<module path>/<file>.rs` of a top-level type.
fn type_file(def: &crate::ir::TypeDef) -> PathBuf {
    let mut path = PathBuf::from("src");
    path.extend(&def.module);
    path.push(format!("{}.rs", naming::file_name(&def.rust_name)));
    path
}

fn add_file(out: &mut Output, path: &str, source: &str, tokens: TokenStream) -> Result<()> {
    let text = rust_file(path, source, tokens)?;
    if out.files.insert(PathBuf::from(path), text).is_some() {
        return Err(Error::Check(format!("two items map to the file {path}")));
    }
    Ok(())
}

#[derive(Default)]
struct ModuleContents {
    children: BTreeSet<String>,
    /// Modules that are not schema paths (`clientset`, ...), root only.
    extra_modules: BTreeSet<String>,
    /// Such modules behind a feature: module → feature.
    gated_modules: BTreeMap<String, String>,
    /// file stem → the types it defines (a kind and its inline types)
    types: BTreeMap<String, Vec<String>>,
    /// file stem → the apply configurations it defines, behind the `apply`
    /// feature (their names are checked by [`crate::plan`]).
    apply: BTreeMap<String, Vec<String>>,
}

impl ModuleContents {
    /// Child modules, the modules of type files and the types they export
    /// share one namespace: a version named like a kind's file (group
    /// `example.com` version `thing` beside group `thing.example.com`)
    /// would make a crate that does not compile.
    fn check_unique_names(&self, module: &[String]) -> Result<()> {
        let mut seen = BTreeSet::new();
        let types = self.types.iter().flat_map(|(file, tys)| std::iter::once(file).chain(tys));
        let names = self.children.iter().chain(&self.extra_modules).chain(self.gated_modules.keys()).chain(types);
        for name in names {
            if !seen.insert(name) {
                let at = if module.is_empty() { "the crate root".to_owned() } else { module.join("::") };
                return Err(Error::Check(format!("two items of {at} are both named {name}")));
            }
        }
        Ok(())
    }

    fn child_items(&self, module: &[String]) -> TokenStream {
        let children = self.children.iter().map(|c| {
            let mut child_path = module.to_vec();
            child_path.push(c.clone());
            let name = tokens::ident(c);
            let gate = naming::module_feature(&child_path)
                .filter(|_| naming::module_feature(module).is_none())
                .map(|f| quote!(#[cfg(feature = #f)]));
            quote!(#gate pub mod #name;)
        });
        let types = self.types.iter().map(|(file, tys)| {
            let file = tokens::ident(file);
            let names: Vec<_> = tys.iter().map(|t| tokens::ident(t)).collect();
            let uses = match names.as_slice() {
                [one] => quote!(pub use self::#file::#one;),
                many => quote!(pub use self::#file::{#(#many),*};),
            };
            quote! {
                mod #file;
                #uses
            }
        });
        let apply = self.apply.iter().map(|(file, tys)| {
            let file = tokens::ident(file);
            let names: Vec<_> = tys.iter().map(|t| tokens::ident(t)).collect();
            let feature = apply::FEATURE;
            match names.as_slice() {
                [one] => quote!(#[cfg(feature = #feature)] pub use self::#file::#one;),
                many => quote!(#[cfg(feature = #feature)] pub use self::#file::{#(#many),*};),
            }
        });
        let extra = self.extra_modules.iter().map(|m| {
            let m = tokens::ident(m);
            quote!(pub mod #m;)
        });
        let gated = self.gated_modules.iter().map(|(m, f)| {
            let m = tokens::ident(m);
            quote!(#[cfg(feature = #f)] pub mod #m;)
        });
        quote!(#(#children)* #(#extra)* #(#gated)* #(#types)* #(#apply)*)
    }
}

/// The generator promises one type per schema: count what was written.
fn check_one_type_per_schema(api: &Api, out: &Output) -> Result<()> {
    let mut missing = Vec::new();
    for def in api.types.values().filter(|d| !d.external) {
        let home = def.owner.as_ref().and_then(|o| api.types.get(o)).unwrap_or(def);
        let path = type_file(home);
        let defines = out.files.get(&path).is_some_and(|text| {
            let name = &def.rust_name;
            let count = [format!("pub struct {name} "), format!("pub struct {name}("), format!("pub enum {name} ")]
                .iter()
                .map(|p| text.matches(p.as_str()).count())
                .sum::<usize>();
            count == 1
        });
        if !defines {
            missing.push(def.schema_name.clone());
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::Check(format!("schemas that did not produce exactly one type: {}", missing.join(", "))))
    }
}

/// Writes the crate to `dir`: first into a sibling temporary directory, then
/// swapped into place, so `dir` is either the old crate or the new one.
pub fn write(output: &Output, dir: &Path) -> Result<()> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Write { path, source }
    };
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let tmp = parent.join(format!(".{name}.{GENERATOR}.tmp"));
    let old = parent.join(format!(".{name}.{GENERATOR}.old"));
    for stale in [&tmp, &old] {
        if stale.exists() {
            std::fs::remove_dir_all(stale).map_err(io(stale))?;
        }
    }
    for (rel, text) in &output.files {
        let path = tmp.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(io(p))?;
        }
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    swap_into_place(&tmp, dir, &old, |from, to| std::fs::rename(from, to))
}

/// Moves `tmp` to `dir`, parking an existing `dir` at `old` meanwhile; when
/// the move fails, the parked output is put back.
fn swap_into_place(
    tmp: &Path,
    dir: &Path,
    old: &Path,
    rename: impl Fn(&Path, &Path) -> std::io::Result<()>,
) -> Result<()> {
    let had_old = dir.exists();
    if had_old {
        rename(dir, old).map_err(|source| Error::Write { path: dir.to_owned(), source })?;
    }
    if let Err(source) = rename(tmp, dir) {
        let restored = !had_old || rename(old, dir).is_ok();
        let _ = std::fs::remove_dir_all(tmp);
        return Err(if restored {
            Error::Write { path: dir.to_owned(), source }
        } else {
            Error::Check(format!(
                "moving the new output into {} failed ({source}); the previous output is kept at {}",
                dir.display(),
                old.display()
            ))
        });
    }
    if had_old {
        std::fs::remove_dir_all(old).map_err(|source| Error::Write { path: old.to_owned(), source })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_swap_restores_the_previous_output() {
        let base = std::env::temp_dir().join(format!("k8s-client-gen-swap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (tmp, dir, old) = (base.join("new"), base.join("out"), base.join("old"));
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("lib.rs"), "previous").unwrap();
        std::fs::write(tmp.join("lib.rs"), "new").unwrap();
        // Parking the old output works; moving the new one in fails.
        let result = swap_into_place(&tmp, &dir, &old, |from, to| {
            if from == tmp.as_path() { Err(std::io::Error::other("disk full")) } else { std::fs::rename(from, to) }
        });
        assert!(matches!(result, Err(Error::Write { .. })), "{result:?}");
        assert_eq!(std::fs::read_to_string(dir.join("lib.rs")).unwrap(), "previous");
        assert!(!old.exists() && !tmp.exists());

        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(tmp.join("lib.rs"), "new").unwrap();
        swap_into_place(&tmp, &dir, &old, |from, to| std::fs::rename(from, to)).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("lib.rs")).unwrap(), "new");
        assert!(!old.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
