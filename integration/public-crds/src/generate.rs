//! The generator's side: every CRD the apiserver accepts must generate (as
//! its operator's set, which is how a user runs it), and every CRD it
//! refuses must be a generator error that names the file and the JSON
//! pointer of the fault. The generator runs in this process, as
//! `k8s-client-gen crd` runs it; a panic is caught and counted as a
//! failure, never taken for an error.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use k8s_client_gen::emit::Options;
use k8s_client_gen::{Error, Generated};

/// Why one generator run did not give a crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The error's text (with its causes), or the panic's message and place.
    pub message: String,
    /// The run panicked: a generator bug whatever the input.
    pub panicked: bool,
    /// The error names the input file and the place in it (a JSON pointer,
    /// or a line for text that is not YAML).
    pub located: bool,
}

/// The last panic's message and place, kept by the hook [`catch_panics`]
/// installs so that a caught panic can be reported.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Keeps panic messages for [`run`] instead of printing them.
pub fn catch_panics() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("panicked{place}: {message}"));
    }));
}

/// Options for a crate nobody writes out: only whether it generates counts.
pub fn check_options() -> Options {
    Options {
        crate_name: "check".into(),
        crate_version: None,
        runtime_path: Some("../runtime".into()),
        standalone: true,
        source_label: String::new(),
        sources_in_label: false,
        client_path: Some("../generated".into()),
        group_names: Default::default(),
    }
}

/// Runs the generator on `inputs` (files or directories of CRD manifests).
pub fn run(inputs: &[PathBuf], options: &Options) -> Result<Generated, Failure> {
    match catch_unwind(AssertUnwindSafe(|| k8s_client_gen::generate_from_crds(inputs, options))) {
        Ok(Ok(generated)) => Ok(generated),
        Ok(Err(e)) => Err(Failure { message: error_text(&e), panicked: false, located: located(&e, inputs) }),
        Err(_) => {
            let message = LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take();
            Err(Failure { message: message.unwrap_or_else(|| "panicked".into()), panicked: true, located: false })
        }
    }
}

/// The error and its causes on one line, as the CLI prints them.
fn error_text(e: &Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text.replace('\n', " ")
}

/// Whether the error says where: one of the input files, and a pointer
/// into it (or, for text that is not YAML, the parser's line).
fn located(e: &Error, inputs: &[PathBuf]) -> bool {
    let names_input = |path: &Path| inputs.iter().any(|i| path.starts_with(i));
    match e {
        Error::Manifest { path, pointer, message, .. } => {
            names_input(path) && (!pointer.is_empty() || message.starts_with("invalid YAML"))
        }
        Error::Schema { path, pointer, .. } | Error::Json { path, pointer, .. } => {
            names_input(path) && !pointer.is_empty()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
        "metadata":{"name":"things.a.io"},
        "spec":{"group":"a.io","names":{"kind":"Thing","plural":"things"},"scope":"Namespaced",
        "versions":[{"name":"v1","served":true,"storage":true,
        "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object"}}}}}]}}"#;

    #[test]
    fn a_good_crd_generates() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("good.json");
        std::fs::write(&file, GOOD).unwrap();
        let generated = run(&[file], &check_options()).unwrap();
        assert_eq!(generated.api.resources.len(), 1);
    }

    #[test]
    fn an_error_names_the_file_and_the_pointer() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bad.json");
        std::fs::write(&file, GOOD.replace(r#""versions":["#, r#""versions":null,"x":["#)).unwrap();
        let failure = run(std::slice::from_ref(&file), &check_options()).unwrap_err();
        assert!(failure.located && !failure.panicked, "{failure:?}");
        assert!(failure.message.contains(&file.display().to_string()), "{}", failure.message);
        assert!(failure.message.contains("/spec/versions"), "{}", failure.message);
    }

    #[test]
    fn text_that_is_not_yaml_is_located_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("chart.yaml");
        std::fs::write(&file, "kind: CustomResourceDefinition\nmetadata:\n  labels: {{- x }}\n    a: b\n").unwrap();
        let failure = run(&[file], &check_options()).unwrap_err();
        assert!(failure.located, "{failure:?}");
    }

    #[test]
    fn an_error_without_a_place_is_not_located() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("unserved.json");
        std::fs::write(&file, GOOD.replace(r#""served":true"#, r#""served":false"#)).unwrap();
        let failure = run(&[file], &check_options()).unwrap_err();
        assert!(!failure.located && !failure.panicked, "{failure:?}");
    }
}
