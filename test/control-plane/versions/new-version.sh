#!/usr/bin/env bash
# Writes the wrapper module that pins one more Kubernetes version for the version matrix:
# test/control-plane/versions/v<major>.<minor>/{go.mod,go.sum,tools.go}. It mirrors Kubernetes'
# own replace block (every staging module at v0.<minor>.<patch>), its go and godebug lines, and
# the etcd server version it pins. Usage: new-version.sh 1.37.2
set -euo pipefail
version="${1:?usage: new-version.sh <kubernetes version, e.g. 1.37.2>}"
version="${version#v}"
IFS=. read -r major minor patch <<<"$version"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$here/v$major.$minor"
export GOTOOLCHAIN=local

upstream="$(go mod download -json "k8s.io/kubernetes@v$version" | sed -n 's/^\s*"GoMod": "\(.*\)",\?$/\1/p')"
[[ -f "$upstream" ]] || { echo "no go.mod downloaded for k8s.io/kubernetes@v$version" >&2; exit 1; }

go_line="$(grep -m1 '^go ' "$upstream")"
godebug="$(grep '^godebug ' "$upstream" || true)"
etcd="$(sed -n 's/^\s*go\.etcd\.io\/etcd\/server\/v3 \(v[^ ]*\).*/\1/p' "$upstream" | head -1)"
staging="$(sed -n 's/^\s*\(k8s\.io\/[^ ]*\) => \.\/staging\/src\/.*/\1/p' "$upstream")"
[[ -n "$etcd" && -n "$staging" ]] || { echo "cannot read etcd or the staging modules from $upstream" >&2; exit 1; }

mkdir -p "$dir"
{
  echo "module resource-distributor/control-plane-v$major.$minor"
  echo
  echo "$go_line"
  [[ -z "$godebug" ]] || { echo; echo "$godebug"; }
  echo
  echo "require ("
  echo "	go.etcd.io/etcd/server/v3 $etcd"
  echo "	k8s.io/kubernetes v$version"
  echo ")"
  echo
  echo "replace ("
  for module in $staging; do echo "	$module => $module v0.$minor.$patch"; done
  echo ")"
} >"$dir/go.mod"
cp "$here/tools.go.template" "$dir/tools.go"
(cd "$dir" && go mod tidy)
echo "wrote $dir (Kubernetes v$version, etcd $etcd)"
