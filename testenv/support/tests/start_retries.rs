//! `TestEnv::start` starts again, with the same flags, when a child lost
//! its port to another process, and only then. The supervisor is replaced (`K8S_TESTENV_BIN`,
//! set on a child process running [`child_start`]) by a script that fails
//! as the real one does and counts its starts.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use k8s_client_testenv::{BIN_ENV, TestEnv};

/// A supervisor that logs `reason` and exits 1, writing one line per run,
/// its arguments, to `count`.
fn failing_supervisor(dir: &Path, reason: &str) -> PathBuf {
    let script = dir.join("kube-testenv");
    let count = dir.join("count");
    fs::write(&script, format!("#!/bin/sh\necho \"run $*\" >> '{}'\necho '{reason}' >&2\nexit 1\n", count.display()))
        .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// The arguments of each run.
fn runs(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join("count")).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// What [`child_start`] passes to `start_with_args`.
const EXTRA_FLAGS: [&str; 2] = ["--no-node", "--apiserver-arg=--v=2"];

/// Runs [`child_start`] in a process of its own whose supervisor is
/// `script`; returns what it printed.
fn start_failure(script: &Path) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_start", "--include-ignored", "--nocapture", "--test-threads=1"])
        .env(BIN_ENV, script)
        .output()
        .unwrap();
    assert!(!out.status.success(), "the start fails");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Run only by [`a_lost_port_is_tried_again_with_the_same_flags_and_other_failures_are_not`],
/// with the supervisor replaced.
#[test]
#[ignore = "run by a_lost_port_is_tried_again_with_the_same_flags_and_other_failures_are_not"]
fn child_start() {
    TestEnv::start_with_args(&EXTRA_FLAGS);
}

#[test]
fn a_lost_port_is_tried_again_with_the_same_flags_and_other_failures_are_not() {
    let dir = temp_dir("lost-port");
    let script = failing_supervisor(&dir, "etcd: listen tcp 127.0.0.1:38041: bind: address already in use");
    let message = start_failure(&script);
    let runs_with_lost_port = runs(&dir);
    assert_eq!(runs_with_lost_port.len(), 3, "three attempts: {message}");
    for run in &runs_with_lost_port {
        let flags = format!("run start {}", EXTRA_FLAGS.join(" "));
        assert!(run.starts_with(&flags), "every attempt gets the caller's flags first: {run}");
        assert!(run.contains(" --state-dir "), "{run}");
    }
    assert!(message.contains("address already in use"), "{message}");

    let dir = temp_dir("other");
    let script = failing_supervisor(&dir, "etcd: data dir is corrupt");
    let message = start_failure(&script);
    assert_eq!(runs(&dir).len(), 1, "no second attempt: {message}");
    assert!(message.contains("data dir is corrupt"), "{message}");
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("testenv-start-retries-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}
