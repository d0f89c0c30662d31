#!/usr/bin/env bash
# The README's code, as a user would take it: the "Custom resources" shell
# commands run as written, and a program of their own (target/readme/app)
# with the README's `[dependencies]` lines and its Rust blocks of "Using it
# from your project" and "Custom resources" must build. "Writing a
# controller" is the `workqueue_controller` example (checked by the
# examples crate's tests and run by the `controller` integration test).
#
# The commands run offline against the crates the workspace build already
# fetched; the program adds what only it uses (the README's tracing-subscriber
# features). Both share the workspace's target directory.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# block SECTION LANG: the fenced LANG blocks under "## SECTION", one after
# another.
block() {
    awk -v section="## $1" -v lang="$2" '
        /^## / { inside = ($0 == section) }
        inside && /^```/ {
            if (fence) { fence = 0; next }
            if ($0 == "```" lang) { fence = 1; found = 1; next }
        }
        inside && fence { print }
        END { if (!found) { print "README.md: no ```" lang " block under \"" section "\"" > "/dev/stderr"; exit 1 } }
    ' README.md
}

export CARGO_TARGET_DIR="$root/target" CARGO_NET_OFFLINE=true

commands=$(block "Custom resources" sh)
echo "$commands"
bash -euo pipefail -c "$commands"
crate_dir=$(sed -n 's/.* OUT=\([^ ]*\).*/\1/p' <<<"$commands" | head -1)
crate_name=$(sed -n 's/.* NAME=\([^ ]*\).*/\1/p' <<<"$commands" | head -1)
test -n "$crate_dir" && test -n "$crate_name" || { echo "check-readme: no OUT= and NAME= in the commands" >&2; exit 1; }

# The dependencies name a checkout beside the project, ../k8s-client: this
# one, by the path the generated crate uses too (one k8s-client in the build).
work=target/readme
rm -rf "$work" && mkdir -p "$work/app/src"
{
    printf '[package]\nname = "readme-app"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[workspace]\n\n'
    block "Using it from your project" toml | sed "s|\"\.\./k8s-client/|\"$root/|g"
    printf '%s = { path = "%s" }\n' "$crate_name" "$crate_dir"
} >"$work/app/Cargo.toml"
{
    echo '#![allow(unused)]'
    echo 'use std::time::Duration;'
    echo 'type BoxError = Box<dyn std::error::Error + Send + Sync>;'
    echo 'async fn using_it() -> Result<(), BoxError> {'
    block "Using it from your project" rust
    echo 'Ok(())'
    echo '}'
    echo 'async fn custom_resources(client: k8s_client_runtime::Client, factory: k8s_client::informers::SharedInformerFactory) -> Result<(), BoxError> {'
    block "Custom resources" rust
    echo 'Ok(())'
    echo '}'
    echo 'fn main() {}'
} >"$work/app/src/main.rs"
cp Cargo.lock "$work/app/Cargo.lock"
(cd "$work/app" && CARGO_NET_OFFLINE=false "${CARGO:-cargo}" build --quiet)
echo "check-readme: the README's commands ran and its code builds"
