#!/usr/bin/env bash
# Generated lines and the generated crate's own compile time (dependencies
# built beforehand; dev profile, no incremental) for each captured release:
#   scripts/bench-releases.sh [RELEASE...]   (default: every specs/kubernetes/*)
# all groups, then `core` alone. A table on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CARGO=${CARGO:-cargo}
gen="$root/target/release/k8s-client-gen"
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=($(cd "$root/specs/kubernetes" && ls -d */ | tr -d /))
export CARGO_TARGET_DIR="$root/target/bench-releases" CARGO_INCREMENTAL=0
seconds() { local s; s=$(date +%s.%N); "$@" >/dev/null 2>&1; echo "$(date +%s.%N) - $s" | bc; }
printf '| release | types | lines of Rust | compile, all groups (s) | compile, core (s) |\n|---|---|---|---|---|\n'
for release in "${releases[@]}"; do
	out="$root/target/bench-releases/crate-$release"
	rm -rf "$out"
	summary=$("$gen" --specs "$root/specs/kubernetes/$release" --out "$out" --runtime-path "$root/runtime" --standalone 2>&1)
	types=$(sed -n 's/^generated \([0-9]*\) types.*/\1/p' <<<"$summary")
	cp "$root/Cargo.lock" "$out/Cargo.lock"
	lines=$(find "$out/src" -name '*.rs' -print0 | xargs -0 cat | wc -l)
	cd "$out"
	$CARGO build --quiet && $CARGO build --quiet --no-default-features --features core
	$CARGO clean --quiet -p k8s-client
	all=$(seconds $CARGO build)
	$CARGO clean --quiet -p k8s-client
	core=$(seconds $CARGO build --no-default-features --features core)
	printf '| %s | %s | %s | %.1f | %.1f |\n' "$release" "$types" "$lines" "$all" "$core"
done
