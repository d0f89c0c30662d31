#!/usr/bin/env bash
# Clean `cargo build --release` times of the generated crate (all features;
# core + apps; core only) beside k8s-openapi (crates.io, all types), in one run.
# For each: the clean build with dependencies, and the crate alone once its
# dependencies are built. Also counts lines of generated code.
# With BASE=<git revision>, the generated crate of that revision (all
# features; core only) is built too, and each crate alone is also type-checked
# (`cargo check`: the front end without code generation), for a before and
# after in one run.
# Usage: scripts/bench-build.sh   (from the repository root)
#        BASE=<rev> scripts/bench-build.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
k8s_openapi_version=${K8S_OPENAPI_VERSION:-0.29}
k8s_openapi_feature=${K8S_OPENAPI_FEATURE:-v1_37}

make_pkg() { # name, dependency line
  mkdir -p "$work/$1/src"
  printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n%s\n\n[workspace]\n' "$1" "$2" >"$work/$1/Cargo.toml"
  echo "" >"$work/$1/src/lib.rs"
}

time_build() { # pkg, crate to rebuild alone
  local dir="$work/$1" target="$work/target-$1"
  (cd "$dir" && cargo fetch --quiet)
  local t0=$(date +%s.%N)
  (cd "$dir" && CARGO_TARGET_DIR="$target" cargo build --release --quiet)
  local t1=$(date +%s.%N)
  # The crate alone: drop its artifacts, keep its dependencies'. The hash
  # after the name starts the glob, so `k8s-client-runtime-…` is kept.
  rm -rf "$target"/release/.fingerprint/"$2"-[0-9a-f]* "$target"/release/deps/lib"${2//-/_}"-* "$target"/release/deps/"${2//-/_}"-*
  local t2=$(date +%s.%N)
  (cd "$dir" && CARGO_TARGET_DIR="$target" cargo build --release --quiet)
  local t3=$(date +%s.%N)
  local check=""
  if [ -n "${BASE:-}" ]; then
    (cd "$dir" && CARGO_TARGET_DIR="$target" cargo check --quiet)
    rm -rf "$target"/debug/.fingerprint/"$2"-[0-9a-f]* "$target"/debug/deps/lib"${2//-/_}"-*
    local c0=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR="$target" cargo check --quiet)
    check=$(printf '   check alone %7.1f s' "$(echo "$(date +%s.%N) - $c0" | bc)")
  fi
  printf '%-28s clean build %7.1f s   crate alone %7.1f s%s\n' "$1" "$(echo "$t1 - $t0" | bc)" "$(echo "$t3 - $t2" | bc)" "$check"
}

make_pkg all-features "k8s-client = { path = \"$root/generated\" }"
make_pkg core-apps "k8s-client = { path = \"$root/generated\", default-features = false, features = [\"core\", \"apps\"] }"
make_pkg core "k8s-client = { path = \"$root/generated\", default-features = false, features = [\"core\"] }"
make_pkg k8s-openapi "k8s-openapi = { version = \"$k8s_openapi_version\", features = [\"$k8s_openapi_feature\"] }"

lines() { echo "$(find "$1/src" -name '*.rs' -print0 | xargs -0 cat | wc -l) in $(find "$1/src" -name '*.rs' | wc -l) files"; }
echo "cores: $(nproc); rustc: $(rustc --version)"
if [ -n "${BASE:-}" ]; then
  # The revision's own generated crate on its own runtime.
  git -C "$root" worktree add --quiet --detach "$work/base" "$BASE"
  trap 'git -C "$root" worktree remove --force "$work/base"; rm -rf "$work"' EXIT
  make_pkg base-all-features "k8s-client = { path = \"$work/base/generated\" }"
  make_pkg base-core "k8s-client = { path = \"$work/base/generated\", default-features = false, features = [\"core\"] }"
  time_build base-all-features k8s-client
  time_build base-core k8s-client
  echo "generated lines at $BASE: $(lines "$work/base/generated")"
fi
time_build k8s-openapi k8s-openapi
time_build all-features k8s-client
time_build core-apps k8s-client
time_build core k8s-client
echo "generated lines: $(lines "$root/generated")"
