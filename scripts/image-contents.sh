#!/usr/bin/env bash
# Builds into DIR what the Dockerfile's final stage holds, with the Dockerfile's own commands:
# `npm run build` (build stage), `npm ci --omit=dev --ignore-scripts --no-audit --no-fund`
# (dependencies stage), then package.json, node_modules/, dist/ and webhook-config/crd/ (runtime
# stage). Start it as the image does: from DIR, `node <the CMD's flags> dist/main.js`, as uid 1000
# with NODE_ENV=production. Used where no container builder is available (test/e2e/image.test.ts).
set -euo pipefail
dir=${1:?usage: scripts/image-contents.sh DIR}
cd "$(dirname "$0")/.."

# build stage (dev dependencies are those of `npm ci` in this checkout)
npm run --silent build

# dependencies stage, in a folder of its own
deps=$(mktemp -d)
trap 'rm -rf "$deps"' EXIT
cp package.json package-lock.json "$deps/"
(cd "$deps" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)

# runtime stage
rm -rf "$dir"
mkdir -p "$dir/webhook-config"
cp package.json "$dir/"
cp -r "$deps/node_modules" "$dir/node_modules"
cp -r dist "$dir/dist"
cp -r webhook-config/crd "$dir/webhook-config/crd"
# Readable by the non-root user that runs it; writable by nobody but root.
chmod -R a+rX,go-w "$dir"
echo "image contents in $dir"
