#!/usr/bin/env bash
# The inputs of another Kubernetes release than the pinned one:
#   scripts/specs-release.sh vMAJOR.MINOR.PATCH [kube-testenv specs flags...]
# (what `make specs KUBERNETES=v1.36.3` runs). A copy of the testenv module
# under target/testenv/<version> is pointed at that release
# (scripts/testenv-version.sh), built without the node (`-tags specsonly`:
# the node follows the kubelet's libraries, which move between releases) and
# run as `kube-testenv specs`, writing specs/kubernetes/<major.minor>/.
set -euo pipefail

version=${1:?usage: specs-release.sh vMAJOR.MINOR.PATCH [specs flags...]}
shift
[[ $version =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]] || { echo "specs-release: '$version' is not a Kubernetes release such as v1.36.3" >&2; exit 2; }
major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/target/testenv/$version"
out="$root/specs/kubernetes/$major.$minor"

mkdir -p "$work"
rm -rf "$work/cmd"
cp "$root/testenv/go.mod" "$root/testenv/go.sum" "$work/"
cp -r "$root/testenv/cmd" "$work/cmd"
"$root/scripts/testenv-version.sh" "$work" "$version"

# The version ldflags of testenv/testenv.mk, so /version names the release.
commit=$(cd "$work" && info=$($GO mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"Info": "\(.*\)".*/\1/p') &&
	[ -n "$info" ] && sed -n 's/.*"Hash":"\([0-9a-f]*\)".*/\1/p' "$info" || true)
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
	ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=$commit"
done
echo "specs-release: building kube-testenv with kube-apiserver $version (several minutes the first time)"
(cd "$work" && $GO build -trimpath -tags specsonly -ldflags "$ldflags" -o bin/kube-testenv ./cmd/kube-testenv)
"$work/bin/kube-testenv" specs "$@" --out "$out"
