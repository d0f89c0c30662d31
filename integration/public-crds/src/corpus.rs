//! The corpus as `scripts/public-crds/fetch.sh` lays it out: one directory
//! per operator, holding its CRD files as they ship (any depth; `.yaml`,
//! `.yml`, `.json`; several documents per file, `List`s of objects), and a
//! `SOURCE` file naming the module it came from.
//!
//! Every CustomResourceDefinition document becomes one [`Crd`], and
//! [`write_alone`] writes each to a file of its own: the apiserver and the
//! generator then judge every CRD alone, and an error names exactly one.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// Reading the corpus or writing the per-CRD files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory of the corpus cannot be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// What was being read.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// A per-CRD file cannot be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// What was being written.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The corpus directory holds no operator directories.
    #[error("{}: no operator directories (run scripts/public-crds/fetch.sh)", .0.display())]
    Empty(PathBuf),
}

/// One operator's CRDs.
#[derive(Debug)]
pub struct Operator {
    /// Directory name in the corpus (`cert-manager`).
    pub name: String,
    /// `module@version` it came from (its `SOURCE` file), or empty.
    pub source: String,
    /// Its CRD documents in file order.
    pub crds: Vec<Crd>,
    /// Documents that are not CRDs (skipped, as the generator skips them).
    pub other_documents: usize,
}

/// One CRD document as shipped.
#[derive(Debug, Clone)]
pub struct Crd {
    /// The operator it ships with.
    pub operator: String,
    /// Where it ships: `<operator>/<file>`, plus `#<document>` when the
    /// file holds several documents.
    pub origin: String,
    /// The file name (no extension) of its own file: the origin's path
    /// with `/` as `__`, plus `-<document>` when the file holds several.
    pub stem: String,
    /// `metadata.name`, or the origin when it has none.
    pub name: String,
    /// `spec.group`.
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// The versions it serves.
    pub served: Vec<String>,
    /// The document, or why it cannot be read.
    pub body: Body,
}

/// A CRD document's content.
#[derive(Debug, Clone)]
pub enum Body {
    /// The document as JSON.
    Object(Value),
    /// A file that is not YAML at all: its text, and the parser's complaint.
    Unreadable {
        /// The file's text, kept to show the generator what shipped.
        text: String,
        /// Why it does not parse.
        error: String,
    },
}

impl Crd {
    /// The file [`write_alone`] writes for this CRD below `dir`.
    pub fn file_in(&self, dir: &Path) -> PathBuf {
        let ext = match self.body {
            Body::Object(_) => "json",
            Body::Unreadable { .. } => "yaml",
        };
        dir.join(&self.operator).join(format!("{}.{ext}", self.stem))
    }
}

/// Reads every operator directory below `dir`, in name order.
pub fn load(dir: &Path) -> Result<Vec<Operator>, Error> {
    let mut operators = Vec::new();
    for path in sorted_entries(dir)? {
        if !path.is_dir() {
            continue;
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let source = std::fs::read_to_string(path.join("SOURCE")).map(|s| s.trim().to_owned()).unwrap_or_default();
        let mut operator = Operator { name, source, crds: Vec::new(), other_documents: 0 };
        for file in manifest_files(&path)? {
            let rel = file.strip_prefix(&path).unwrap_or(&file).to_string_lossy().replace('\\', "/");
            read_file(&file, &rel, &mut operator)?;
        }
        operators.push(operator);
    }
    if operators.is_empty() {
        return Err(Error::Empty(dir.to_owned()));
    }
    Ok(operators)
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let read = |source| Error::Read { path: dir.to_owned(), source };
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).map_err(read)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>().map_err(read)?;
    entries.sort();
    Ok(entries)
}

fn manifest_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for path in sorted_entries(dir)? {
        if path.is_dir() {
            files.extend(manifest_files(&path)?);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json") {
            files.push(path);
        }
    }
    Ok(files)
}

fn read_file(path: &Path, rel: &str, operator: &mut Operator) -> Result<(), Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.to_owned(), source })?;
    let base_stem = rel.rsplit_once('.').map_or(rel, |(stem, _)| stem).replace('/', "__");
    let mut documents = Vec::new();
    for doc in serde_yaml_ng::Deserializer::from_str(&text) {
        match Value::deserialize(doc) {
            Ok(value) => documents.push(value),
            Err(e) => {
                // A file that is not YAML (a chart template, say) cannot be
                // split; it stays whole, as one CRD nobody can take.
                operator.crds.push(Crd {
                    operator: operator.name.clone(),
                    origin: format!("{}/{rel}", operator.name),
                    stem: base_stem,
                    name: format!("{}/{rel}", operator.name),
                    group: String::new(),
                    kind: String::new(),
                    served: Vec::new(),
                    body: Body::Unreadable { text: text.clone(), error: e.to_string() },
                });
                return Ok(());
            }
        }
    }
    let objects: Vec<Value> = documents
        .into_iter()
        .flat_map(|v| match v.get("kind").and_then(Value::as_str) {
            Some("List") => v.get("items").and_then(Value::as_array).cloned().unwrap_or_default(),
            _ => vec![v],
        })
        .filter(|v| !v.is_null())
        .collect();
    let several = objects.len() > 1;
    for (index, object) in objects.into_iter().enumerate() {
        if object.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
            operator.other_documents += 1;
            continue;
        }
        let text_at = |pointer: &str| object.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
        let origin = format!("{}/{rel}", operator.name);
        let (origin, stem) = if several {
            (format!("{origin}#{index}"), format!("{base_stem}-{index}"))
        } else {
            (origin, base_stem.clone())
        };
        let served = object
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(|versions| {
                versions
                    .iter()
                    .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
                    .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let name = text_at("/metadata/name");
        operator.crds.push(Crd {
            operator: operator.name.clone(),
            name: if name.is_empty() { origin.clone() } else { name },
            origin,
            stem,
            group: text_at("/spec/group"),
            kind: text_at("/spec/names/kind"),
            served,
            body: Body::Object(object),
        });
    }
    Ok(())
}

/// Writes `crd` to a file of its own below `dir` (see [`Crd::file_in`]):
/// the document as JSON, or an unreadable file's text as it shipped.
pub fn write_alone(crd: &Crd, dir: &Path) -> Result<PathBuf, Error> {
    let path = crd.file_in(dir);
    let write = |source| Error::Write { path: path.clone(), source };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(write)?;
    }
    let text = match &crd.body {
        Body::Object(value) => serde_json::to_string_pretty(value).map_err(|e| write(e.into()))?,
        Body::Unreadable { text, .. } => text.clone(),
    };
    std::fs::write(&path, text).map_err(write)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd_yaml(name: &str, group: &str) -> String {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {name}\n\
             spec:\n  group: {group}\n  names: {{kind: Thing, plural: things}}\n  scope: Namespaced\n  \
             versions:\n  - {{name: v1, served: true, storage: true}}\n  - {{name: v0, served: false, storage: false}}\n"
        )
    }

    #[test]
    fn splits_files_into_crds_and_skips_other_documents() {
        let dir = tempfile::tempdir().unwrap();
        let op = dir.path().join("op");
        std::fs::create_dir_all(op.join("deep")).unwrap();
        std::fs::write(op.join("SOURCE"), "example.com/op@v1.0.0\n").unwrap();
        std::fs::write(op.join("one.yaml"), crd_yaml("things.a.io", "a.io")).unwrap();
        let many = format!("{}---\nkind: ConfigMap\n---\n{}", crd_yaml("things.b.io", "b.io"), crd_yaml("", "c.io"));
        std::fs::write(op.join("deep/many.yml"), many).unwrap();
        std::fs::write(op.join("notes.txt"), "not a manifest").unwrap();

        let operators = load(dir.path()).unwrap();
        assert_eq!(operators.len(), 1);
        let op = &operators[0];
        assert_eq!((op.name.as_str(), op.source.as_str(), op.other_documents), ("op", "example.com/op@v1.0.0", 1));
        let seen: Vec<(&str, &str, &str, &str)> =
            op.crds.iter().map(|c| (c.origin.as_str(), c.stem.as_str(), c.name.as_str(), c.group.as_str())).collect();
        assert_eq!(
            seen,
            [
                ("op/deep/many.yml#0", "deep__many-0", "things.b.io", "b.io"),
                ("op/deep/many.yml#2", "deep__many-2", "op/deep/many.yml#2", "c.io"),
                ("op/one.yaml", "one", "things.a.io", "a.io"),
            ]
        );
        assert_eq!(op.crds[2].served, ["v1"]);

        let out = dir.path().join("out");
        let written = write_alone(&op.crds[0], &out).unwrap();
        assert_eq!(written, out.join("op/deep__many-0.json"));
        let back: Value = serde_json::from_str(&std::fs::read_to_string(written).unwrap()).unwrap();
        assert_eq!(back.pointer("/metadata/name").and_then(Value::as_str), Some("things.b.io"));
    }

    #[test]
    fn a_file_that_is_not_yaml_stays_whole() {
        let dir = tempfile::tempdir().unwrap();
        let op = dir.path().join("op");
        std::fs::create_dir_all(&op).unwrap();
        let template = "kind: CustomResourceDefinition\nmetadata:\n  labels: {{- include \"x\" . }}\n    a: b\n";
        std::fs::write(op.join("chart.yaml"), template).unwrap();
        let operators = load(dir.path()).unwrap();
        let crd = &operators[0].crds[0];
        assert!(matches!(&crd.body, Body::Unreadable { text, .. } if text == template));
        let written = write_alone(crd, &dir.path().join("out")).unwrap();
        assert_eq!(std::fs::read_to_string(written).unwrap(), template);
    }

    #[test]
    fn an_empty_corpus_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(load(dir.path()), Err(Error::Empty(_))));
    }
}
