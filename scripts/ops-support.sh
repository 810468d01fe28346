#!/usr/bin/env bash
# docs/ops-support.md from ops.yaml and the bundled backends' YAMLs, by bp-codegen: writes the
# page (`make ops-support`), or with --check writes it into SCRATCH_DIR and fails when it differs
# from the committed page (a test of `make test`), so that the page cannot go stale.
#
# usage: scripts/ops-support.sh BP_CODEGEN [--check SCRATCH_DIR]
set -euo pipefail

if [ $# -ne 1 ] && { [ $# -ne 3 ] || [ "$2" != --check ]; }; then
  echo "usage: $0 BP_CODEGEN [--check SCRATCH_DIR]" >&2
  exit 2
fi
codegen=$(realpath "$1")
# The inputs are named relative to the source root, as the page names them.
cd "$(dirname "$0")/.."
page=docs/ops-support.md
output=$page
if [ $# -eq 3 ]; then
  mkdir -p "$3"
  output=$3/ops-support.md
fi

"$codegen" ops-support --ops core/ops/ops.yaml --backend plugins/cpu/cpu.yaml \
  --backend plugins/opencl/opencl.yaml --backend plugins/cuda/cuda.yaml --output "$output"

if [ $# -eq 3 ] && ! cmp -s "$output" "$page"; then
  diff -u "$page" "$output" | head -n 40 >&2 || true
  echo "$page differs from what bp-codegen now makes of ops.yaml and the backend YAMLs" \
    "(the diff above): run \`make ops-support\` and commit the result" >&2
  exit 1
fi
