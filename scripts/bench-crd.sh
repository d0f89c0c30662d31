#!/usr/bin/env bash
# Figures for crates of custom resources, in one run on this machine:
#  - generation time (median of 5) and generated lines for each CRD set of
#    ../shared/crds and for all of them together;
#  - the clean `cargo build --release` of the generated Gateway API crate
#    beside kopium's output for the same CRDs and served versions (types
#    only, on kube + k8s-openapi from crates.io), alternating A B A B, and
#    each crate alone once its dependencies are built.
# Usage: scripts/bench-crd.sh [RUNS]   (from the repository root; default 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
crds=${CRDS_DIR:-$root/../shared/crds}
kopium_version=${KOPIUM_VERSION:-0.24.1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

cd "$root"
cargo build --release --quiet -p k8s-client-gen
gen=$root/target/release/k8s-client-gen
generate() { # out, inputs...
  local out=$1; shift
  "$gen" crd --crds "$@" --out "$out" --crate-name "$(basename "$out")" \
    --runtime-path "$root/runtime" --client-path "$root/generated" --standalone 2>/dev/null
}
lines() { find "$1/src" -name '*.rs' -print0 | xargs -0 cat | wc -l; }

echo "cores: $(nproc); rustc: $(rustc --version); kopium $kopium_version"
echo
echo "== generation (median of 5 runs)"
for set in "$crds"/* all; do
  if [ "$set" = all ]; then inputs=("$crds"/*); name=all; else inputs=("$set"); name=$(basename "$set"); fi
  out="$work/gen-$name"
  times=$(for _ in 1 2 3 4 5; do t0=$(now); generate "$out" "${inputs[@]}"; t1=$(now); echo "$t1 - $t0" | bc; done)
  files=$(find "${inputs[@]}" -name '*.yaml' | wc -l)
  yaml=$(find "${inputs[@]}" -name '*.yaml' -print0 | xargs -0 cat | wc -l)
  printf '%-14s %3d CRDs, %6d YAML lines -> %6d Rust lines in %6.3f s\n' "$name" "$files" "$yaml" "$(lines "$out")" "$(echo "$times" | median)"
done

echo
echo "== Gateway API crate: this generator vs kopium (release)"
kopium=$root/target/tools/bin/kopium
if [ ! -x "$kopium" ] || ! "$kopium" --version | grep -q "$kopium_version"; then
  cargo install kopium --version "$kopium_version" --locked --quiet --root "$root/target/tools"
fi
ours="$work/gateway-ours"
generate "$ours" "$crds/gateway-api"
cp Cargo.lock "$ours/Cargo.lock"

theirs="$work/gateway-kopium"
mkdir -p "$theirs/src"
printf '[package]\nname = "gateway-kopium"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\nkube = { version = "5", default-features = false, features = ["derive"] }\nk8s-openapi = { version = "0.29", features = ["v1_37"] }\nserde = { version = "1", features = ["derive"] }\nserde_json = "1"\nschemars = "1"\n\n[workspace]\n' >"$theirs/Cargo.toml"
: >"$theirs/src/lib.rs"
for file in "$crds"/gateway-api/*.yaml; do
  # Each served version, as this generator does (controller-gen writes a
  # version's `name` before its `served`).
  for version in $(awk '/^    name: /{ v = $2 } /^    served: true/{ print v }' "$file"); do
    module=$(basename "$file" .yaml | sed 's/.*_//')_$version
    "$kopium" --docs --api-version "$version" -f "$file" >"$theirs/src/$module.rs"
    echo "#[allow(clippy::all)] pub mod $module;" >>"$theirs/src/lib.rs"
  done
done
echo "generated lines: ours $(lines "$ours") (types, clients, listers, informers), kopium $(lines "$theirs") (types)"

(cd "$ours" && cargo fetch --quiet) && (cd "$theirs" && cargo fetch --quiet)
clean_build() { # dir, target → seconds
  rm -rf "$2"
  local t0; t0=$(now)
  (cd "$1" && CARGO_TARGET_DIR="$2" cargo build --release --quiet --offline)
  echo "$(now) - $t0" | bc
}
alone_build() { # dir, target, crate → seconds (dependencies kept)
  rm -rf "$2"/release/.fingerprint/"$3"-* "$2"/release/deps/lib"${3//-/_}"-* "$2"/release/deps/"${3//-/_}"-*
  local t0; t0=$(now)
  (cd "$1" && CARGO_TARGET_DIR="$2" cargo build --release --quiet --offline)
  echo "$(now) - $t0" | bc
}
: >"$work/ours.clean"; : >"$work/theirs.clean"; : >"$work/ours.alone"; : >"$work/theirs.alone"
for i in $(seq "$runs"); do
  clean_build "$ours" "$work/t-ours" >>"$work/ours.clean"
  clean_build "$theirs" "$work/t-theirs" >>"$work/theirs.clean"
  alone_build "$ours" "$work/t-ours" gateway-ours >>"$work/ours.alone"
  alone_build "$theirs" "$work/t-theirs" gateway-kopium >>"$work/theirs.alone"
  echo "run $i/$runs done"
done
range_of() { sort -n "$1" | sed -n '1p;$p' | paste -sd-; }
report() { # label, ours file, theirs file
  local a b
  a=$(median <"$2"); b=$(median <"$3")
  printf '%-12s ours %7.1f s (%s)   kopium %7.1f s (%s)   ratio %.2f\n' \
    "$1" "$a" "$(range_of "$2")" "$b" "$(range_of "$3")" "$(echo "$a / $b" | bc -l)"
}
report "clean" "$work/ours.clean" "$work/theirs.clean"
report "crate alone" "$work/ours.alone" "$work/theirs.alone"
