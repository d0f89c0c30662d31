#!/usr/bin/env bash
# `make check-package`: the crates as crates.io would get them, used as a
# user would use them.
#  1. `cargo package` of the runtime, the Kubernetes crate, the generator and the derives
#     (one run: cargo resolves their dependencies on each other among the
#     packages themselves); each .crate's size, refused above crates.io's
#     10 MB limit.
#  2. The user project examples/crd-build-script, copied outside the
#     workspace, built on the unpacked packages (`[patch.crates-io]`): its
#     build.rs generates the client for its CRD.
#  3. That program against a real apiserver (its own testenv): it creates
#     the CRD, then creates, lists and watches a custom resource.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
CARGO=${CARGO:-cargo}
testenv=${TESTENV_BIN:-$root/.testenv/bin/kube-testenv}
work="$root/target/check-package"
packages=(k8s-client-runtime k8s-client k8s-client-gen k8s-client-derive)
declare -A dirs=([k8s-client-runtime]=runtime [k8s-client]=generated [k8s-client-gen]=generator [k8s-client-derive]=derive)
limit=$((10 * 1024 * 1024))

[ -x "$testenv" ] || { echo "check-package: $testenv is missing: run 'make testenv-build'" >&2; exit 1; }
rm -rf "$work/crates" "$work/project"
mkdir -p "$work/crates"

# 1. Package. Verification would build each package alone; step 2 builds
# them as a dependent does, which is what counts.
start=$(date +%s)
args=()
for p in "${packages[@]}"; do args+=(-p "$p"); done
(cd "$root" && $CARGO package --quiet --allow-dirty --no-verify "${args[@]}")
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
for p in "${packages[@]}"; do
	file="$root/target/package/$p-$version.crate"
	[ -f "$file" ] || { echo "check-package: cargo package wrote no $file" >&2; exit 1; }
	size=$(stat -c %s "$file")
	files=$(tar tzf "$file" | wc -l)
	printf 'check-package: %-20s %s  %6.2f MB compressed, %d files\n' "$p" "$version" "$(echo "$size / 1048576" | bc -l)" "$files"
	[ "$size" -le "$limit" ] || { echo "check-package: $p is above crates.io's 10 MB limit" >&2; exit 1; }
	tar xzf "$file" -C "$work/crates"
	# Every tracked Rust source of the crate is in the package (what a
	# build with all features needs, beyond what step 2 compiles).
	dir=${dirs[$p]}
	# Directories with a Cargo.toml of their own (fuzz targets, golden
	# crates) are packages of their own, which cargo leaves out.
	nested=$(cd "$root/$dir" && git ls-files '*/Cargo.toml' | sed 's#/Cargo.toml$#/#')
	missing=$(comm -23 <(cd "$root/$dir" && git ls-files '*.rs' | grep -vF "${nested:-//}" | while read -r f; do [ ! -f "$f" ] || echo "$f"; done | sort) \
		<(cd "$work/crates/$p-$version" && find . -name '*.rs' | sed 's#^\./##' | sort))
	[ -z "$missing" ] || { echo "check-package: $p's package lacks tracked sources:" >&2; echo "$missing" | head >&2; exit 1; }
done

# 2. The user project, outside the workspace, on the packages.
cp -r "$root/examples/crd-build-script" "$work/project"
{
	echo
	echo "[patch.crates-io]"
	for p in "${packages[@]}"; do echo "$p = { path = \"../crates/$p-$version\" }"; done
} >>"$work/project/Cargo.toml"
# The workspace's lockfile pins every shared dependency, as in its own build.
cp "$root/Cargo.lock" "$work/project/Cargo.lock"
(cd "$work/project" && CARGO_TARGET_DIR="$work/target" $CARGO build --quiet)

# 3. Against a real apiserver.
state="$work/testenv"
rm -rf "$state"
"$testenv" start --detach --no-node --state-dir "$state" >/dev/null
trap '"$testenv" ctl --state-dir "$state" stop >/dev/null 2>&1 || true' EXIT
out=$(KUBECONFIG="$state/kubeconfig" "$work/target/debug/note-client" default)
echo "$out" | sed 's/^/check-package: note-client: /'
grep -q '^created note-' <<<"$out" &&
	grep -q '^listed 1 with texts \["hello from build.rs"\]$' <<<"$out" &&
	grep -q '^watched ADDED note-' <<<"$out" ||
	{ echo "check-package: the user project's program did not create, list and watch its Note" >&2; exit 1; }
echo "check-package: $(($(date +%s) - start)) s"
