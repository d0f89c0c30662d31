#!/usr/bin/env bash
# Clean `cargo build --release` times of the generated crate (all features;
# core + apps only) beside k8s-openapi (crates.io, all types), in one run.
# For each: the clean build with dependencies, and the crate alone once its
# dependencies are built. Also counts lines of generated code.
# Usage: scripts/bench-build.sh   (from the repository root)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
k8s_openapi_version=${K8S_OPENAPI_VERSION:-0.29}
k8s_openapi_feature=${K8S_OPENAPI_FEATURE:-v1_35}

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
  # The crate alone: drop its artifacts, keep its dependencies'.
  rm -rf "$target"/release/.fingerprint/"$2"-* "$target"/release/deps/lib"${2//-/_}"-* "$target"/release/deps/"${2//-/_}"-*
  local t2=$(date +%s.%N)
  (cd "$dir" && CARGO_TARGET_DIR="$target" cargo build --release --quiet)
  local t3=$(date +%s.%N)
  printf '%-28s clean build %7.1f s   crate alone %7.1f s\n' "$1" "$(echo "$t1 - $t0" | bc)" "$(echo "$t3 - $t2" | bc)"
}

make_pkg all-features "k8s-client = { path = \"$root/generated\" }"
make_pkg core-apps "k8s-client = { path = \"$root/generated\", default-features = false, features = [\"core\", \"apps\"] }"
make_pkg k8s-openapi "k8s-openapi = { version = \"$k8s_openapi_version\", features = [\"$k8s_openapi_feature\"] }"

echo "cores: $(nproc); rustc: $(rustc --version)"
time_build k8s-openapi k8s-openapi
time_build all-features k8s-client
time_build core-apps k8s-client
echo "generated lines: $(find "$root/generated/src" -name '*.rs' -print0 | xargs -0 cat | wc -l) in $(find "$root/generated/src" -name '*.rs' | wc -l) files"
