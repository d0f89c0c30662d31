#!/usr/bin/env bash
# Points the testenv Go module in DIR at another Kubernetes release:
#   scripts/testenv-version.sh DIR vMAJOR.MINOR.PATCH
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/apiserver,
# ...) at v0.0.0 and replaces them with ./staging paths of its own repository;
# outside it each must point at the published tag of the same release
# (v1.37.2 -> v0.37.2). The list of staging modules is read from that
# release's own go.mod, so modules a release adds or drops are followed.
set -euo pipefail

dir=${1:?usage: testenv-version.sh DIR vMAJOR.MINOR.PATCH}
version=${2:?usage: testenv-version.sh DIR vMAJOR.MINOR.PATCH}
[[ $version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "testenv-version: '$version' is not a Kubernetes release such as v1.37.2" >&2; exit 2; }
staging="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
GO=${GO:-go}

cd "$dir"
modfile=$($GO mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[ -n "$modfile" ] || { echo "testenv-version: the Go module proxy has no k8s.io/kubernetes $version" >&2; exit 1; }

# Drop every replace of a k8s.io module, then add the release's own list.
for old in $($GO mod edit -json | sed -n 's/.*"Path": "\(k8s\.io\/[^"]*\)".*/\1/p' | sort -u); do
	$GO mod edit -dropreplace "$old" 2>/dev/null || true
done
modules=$(sed -n 's#^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/.*#\1#p' "$modfile")
[ -n "$modules" ] || { echo "testenv-version: no staging modules in $modfile" >&2; exit 1; }
for module in $modules; do
	$GO mod edit -replace "$module=$module@$staging"
done
$GO mod edit -require "k8s.io/kubernetes@$version"
# The release's GODEBUG defaults, as its own binaries are built with.
godebug=$(sed -n 's/^godebug default=\(.*\)/\1/p' "$modfile")
[ -z "$godebug" ] || $GO mod edit -godebug "default=$godebug"
# Direct requirements of staging modules carry a real version too, so that
# `go list -m` shows the release.
for module in $($GO mod edit -json | sed -n '/"Require"/,/\]/s/.*"Path": "\(k8s\.io\/[^"]*\)".*/\1/p'); do
	if grep -qx "$module" <<<"$modules"; then
		current=$($GO mod edit -json | grep -A1 "\"Path\": \"$module\"" | sed -n 's/.*"Version": "\(.*\)".*/\1/p' | head -1)
		[ "$current" = "v0.0.0" ] || $GO mod edit -require "$module@$staging"
	fi
done
$GO mod tidy
echo "testenv-version: $dir now builds kube-apiserver $version (staging modules $staging)"
