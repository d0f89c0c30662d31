#!/usr/bin/env bash
# Fetches the public CRD corpus pinned in corpus.txt (beside this script) and
# lays it out as <out>/<operator>/<path inside the module>, one directory per
# operator, for `make check-public-crds`. A `sed:<expression>` field on a
# line edits that operator's copies (e.g. drops Helm template actions from a
# file that is a chart template rather than a manifest).
#
#   scripts/public-crds/fetch.sh [out-dir]     (default: target/public-crds/corpus)
#
# Each module comes from the Go module proxy through `go mod download`, which
# checks it against the checksum database and keeps it in the module cache,
# so a second run reads only the cache. The output directory is replaced as a
# whole. A glob that matches nothing is an error: the list no longer fits its
# module.
set -euo pipefail
shopt -s nullglob globstar

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
list="$here/corpus.txt"
out=${1:-target/public-crds/corpus}
GO=${GO:-go}

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# `go mod download` outside any module: the repository's own Go module
# (testenv/) must not take part.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

operators=0
files=0
line_no=0
while read -r line; do
	line_no=$((line_no + 1))
	line=${line%%#*}
	read -r -a fields <<<"$line"
	[ ${#fields[@]} -eq 0 ] && continue
	if [ ${#fields[@]} -lt 3 ]; then
		echo "$list:$line_no: expected '<operator> <module>@<version> <glob>...'" >&2
		exit 1
	fi
	operator=${fields[0]}
	module=${fields[1]}
	info=$(cd "$scratch" && GOFLAGS=-mod=mod GOTOOLCHAIN=local "$GO" mod download -json "$module" 2>&1) || true
	dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
	if [ -z "$dir" ] || [ ! -d "$dir" ]; then
		echo "$list:$line_no: cannot download $module:" >&2
		sed -n 's/^[[:space:]]*"Error": //p' <<<"$info" >&2
		exit 1
	fi
	mkdir -p "$out/$operator"
	globs=()
	edits=()
	for field in "${fields[@]:2}"; do
		case $field in
		sed:*) edits+=(-e "${field#sed:}") ;;
		*) globs+=("$field") ;;
		esac
	done
	for glob in "${globs[@]}"; do
		matched=0
		for path in "$dir"/$glob; do
			rel=${path#"$dir"/}
			# kustomize's own file sits beside the CRDs it lists.
			[ "$(basename "$rel")" = kustomization.yaml ] && continue
			mkdir -p "$out/$operator/$(dirname "$rel")"
			# The module cache is read-only; the copy must be removable.
			install -m 0644 "$path" "$out/$operator/$rel"
			if [ ${#edits[@]} -gt 0 ]; then
				sed -i "${edits[@]}" "$out/$operator/$rel"
			fi
			matched=$((matched + 1))
		done
		if [ "$matched" -eq 0 ]; then
			echo "$list:$line_no: $glob matches no file in $module" >&2
			exit 1
		fi
		files=$((files + matched))
	done
	printf '%s\n' "$module" >"$out/$operator/SOURCE"
	operators=$((operators + 1))
done <"$list"

echo "public CRDs: $operators operators, $files files in $out"
