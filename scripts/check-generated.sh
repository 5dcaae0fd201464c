#!/bin/sh
# Fails when the committed types are not what the spec generates, and says how to bring them up to date.
# Usage: check-generated.sh [spec] [types]   (defaults: spec/openapi.yaml generated/api.d.ts)
spec=${1:-spec/openapi.yaml}
types=${2:-generated/api.d.ts}
if ! openapi-typescript "$spec" -o "$types" --check; then
  echo "$types is not what $spec generates: run \`npm run generate\` and commit $types with the spec." >&2
  exit 1
fi
