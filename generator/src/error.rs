//! The generator's errors: each names the input file and, where there is
//! one, the JSON pointer of the offending node.

use std::path::PathBuf;

/// Everything that stops a run. Input errors name the file (and the
/// document and JSON pointer where there are some), so that a user finds
/// the node without reading the generator.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input file or directory that cannot be read.
    #[error("{}: cannot read", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why the system refused.
        #[source]
        source: std::io::Error,
    },
    /// An OpenAPI document that is not JSON, or whose nodes do not have the
    /// types the schema model expects (a string where an object belongs).
    #[error("{}: invalid JSON at {pointer}", path.display())]
    Json {
        /// The document.
        path: PathBuf,
        /// JSON pointer of the node that failed (`/` for the whole document).
        pointer: String,
        /// What the parser or the schema model says is wrong.
        #[source]
        source: serde_json::Error,
    },
    /// A well-formed document the generator cannot turn into Rust: a `$ref`
    /// to nothing, an unsupported type, a name that is no identifier.
    #[error("{}: {pointer}: {message}", path.display())]
    Schema {
        /// The document.
        path: PathBuf,
        /// JSON pointer of the node within the document.
        pointer: String,
        /// What is wrong with it.
        message: String,
    },
    /// A CRD manifest that is not YAML, or that the apiserver would refuse.
    #[error("{}: document {document}: {}{message}", path.display(), if pointer.is_empty() { String::new() } else { format!("{pointer}: ") })]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// Index of the YAML document in the file, from 0 (`---` separates
        /// them).
        document: usize,
        /// JSON pointer within that document; empty when the document as a
        /// whole is wrong (not YAML).
        pointer: String,
        /// What is wrong.
        message: String,
    },
    /// An input whose place or name is wrong: a specs file outside the
    /// `apis/<group>/<version>.json` layout.
    #[error("{}: {message}", path.display())]
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// An input directory without one OpenAPI document or manifest in it.
    #[error("{}: no OpenAPI documents found (expected api/v1.json or apis/<group>/<version>.json)", .0.display())]
    NoDocuments(PathBuf),
    /// The output cannot be written. The output directory then holds the
    /// previous crate or the new one, never a mix ([`crate::emit::write`]).
    #[error("{}: cannot write output", path.display())]
    Write {
        /// The file or directory that failed.
        path: PathBuf,
        /// Why the system refused.
        #[source]
        source: std::io::Error,
    },
    /// Generated code that does not parse: a generator bug, never the
    /// input's fault.
    #[error("generated code for {what} does not parse as Rust")]
    Emit {
        /// The file being made (`src/lib.rs`).
        what: String,
        /// Where `syn` stopped.
        #[source]
        source: syn::Error,
    },
    /// A live cluster that cannot be reached or read: kubeconfig, TLS,
    /// discovery, an answer that is not what `/openapi/v3` serves.
    #[error("{url}: {message}")]
    Cluster {
        /// The URL asked; empty when the client could not be set up (a
        /// kubeconfig error), before any request.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// A `.proto` file that does not parse, or a protobuf input that is
    /// incomplete (a message of the Go facts in no `.proto` file).
    #[error("{}: {message}", path.display())]
    Protobuf {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A `.proto` file and the Go facts (`proto/go-fields.json`) that
    /// disagree on a field's number or name: a capture mixing versions.
    #[error("{} and {}: {message}", proto.display(), facts.display())]
    ProtobufFacts {
        /// The `.proto` file.
        proto: PathBuf,
        /// The facts file.
        facts: PathBuf,
        /// The message and field.
        message: String,
    },
    /// A message that does not fit the OpenAPI schema of the type it
    /// encodes, for a type reached from a kind.
    #[error("{} and {}: {message}", proto.display(), document.display())]
    ProtobufMismatch {
        /// The `.proto` file declaring the message.
        proto: PathBuf,
        /// The OpenAPI document declaring the schema.
        document: PathBuf,
        /// The message, the schema and the field that does not match.
        message: String,
    },
    /// A check over the whole input or output that failed: two items with
    /// one name, an unknown `--group-name` group, no served CRD version.
    /// The message says what and where.
    #[error("{0}")]
    Check(String),
}

/// The generator's `Result`, with [`Error`] unless said otherwise.
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
    for seg in path {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => out.push_str(&format!("/{}", pointer_token(key))),
            Segment::Enum { variant } => out.push_str(&format!("/{}", pointer_token(variant))),
            Segment::Unknown => out.push_str("/?"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::Error;

    /// Each variant with a cause names its own layer only: the cause is
    /// reached through `source()` and printed once by whoever prints the
    /// chain (the CLI prints it on one line).
    #[test]
    fn variants_with_a_cause_do_not_repeat_it() {
        let io = || std::io::Error::other("the disk is on fire");
        let json = serde_json::from_str::<u8>("\"not a number\"").unwrap_err();
        let errors = [
            Error::Read { path: "specs/api/v1.json".into(), source: io() },
            Error::Json { path: "specs/api/v1.json".into(), pointer: "/paths".into(), source: json },
            Error::Write { path: "out/src/lib.rs".into(), source: io() },
            Error::Emit {
                what: "src/lib.rs".into(),
                source: syn::Error::new(proc_macro2::Span::call_site(), "expected identifier"),
            },
        ];
        for err in &errors {
            let cause = err.source().unwrap_or_else(|| panic!("{err:?} lost its cause")).to_string();
            let text = err.to_string();
            assert!(!text.contains(&cause), "{text:?} repeats its cause {cause:?}");
            let chain = k8s_client_runtime::ErrorChain(err).to_string();
            assert_eq!(chain, format!("{text}: {cause}"));
        }
    }
}
