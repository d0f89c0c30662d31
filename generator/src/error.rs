//! The generator's errors: each names the input file and, where there is
//! one, the JSON pointer of the offending node.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: invalid JSON at {pointer}: {source}", path.display())]
    Json {
        path: PathBuf,
        pointer: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: {pointer}: {message}", path.display())]
    Schema { path: PathBuf, pointer: String, message: String },
    #[error("{}: document {document}: {}{message}", path.display(), if pointer.is_empty() { String::new() } else { format!("{pointer}: ") })]
    Manifest { path: PathBuf, document: usize, pointer: String, message: String },
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    #[error("{}: no OpenAPI documents found (expected api/v1.json or apis/<group>/<version>.json)", .0.display())]
    NoDocuments(PathBuf),
    #[error("{}: cannot write output: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("generated code for {what} does not parse as Rust: {source}")]
    Emit {
        what: String,
        #[source]
        source: syn::Error,
    },
    #[error("{url}: {message}")]
    Cluster { url: String, message: String },
    #[error("{0}")]
    Check(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Escapes one reference token of a JSON pointer (RFC 6901).
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The JSON pointer of the node a `serde_path_to_error` path leads to
/// (`""` for the root).
pub fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => out.push_str(&format!("/{}", pointer_token(key))),
            Segment::Enum { variant } => out.push_str(&format!("/{}", pointer_token(variant))),
            Segment::Unknown => out.push_str("/?"),
        }
    }
    out
}
