#!/usr/bin/env bash
# Usage: checks_test.sh CHECKS_DIR
#
# The two checks on core/src (check_include_direction.sh, check_backend_names.sh) run on small
# trees made here: each passes a tree that keeps its rule and fails, naming the offending line,
# a tree that breaks it, so that neither can pass by checking nothing.
set -euo pipefail

checks=${1:?usage: checks_test.sh CHECKS_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect STATUS OUTPUT_PART COMMAND...: COMMAND exits with STATUS and prints OUTPUT_PART.
expect() {
  local want_status=$1 want_output=$2
  shift 2
  local output status=0
  output=$("$@" 2>&1) || status=$?
  if [[ $status -ne $want_status || $output != *"$want_output"* ]]; then
    echo "FAILED: $*"
    echo "  wanted exit status $want_status and output containing: $want_output"
    echo "  got exit status $status and output:"
    sed 's/^/    /' <<<"$output"
    failures=$((failures + 1))
  fi
}

# A tree whose layers depend one way.
src=$work/src
mkdir -p "$src/support" "$src/dispatch" "$src/runtime" "$src/tensor"
echo '#pragma once' >"$src/support/log.h"
printf '#include "support/log.h"\n#include <dispatch/table.h>\n' >"$src/dispatch/table.cpp"
printf '#include "dispatch/table.h"\n#include "support/log.h"\n' >"$src/runtime/loader.cpp"
printf '#include "runtime/registry.h"\n' >"$src/tensor/copies.cpp"  # not a layer: unchecked
expect 0 "" "$checks/check_include_direction.sh" "$src" support dispatch runtime

# Each way of reaching up fails, named by file and line.
printf '// the table\n#include "runtime/registry.h"\n' >"$src/dispatch/quoted.cpp"
expect 1 "dispatch/quoted.cpp:2:" \
  "$checks/check_include_direction.sh" "$src" support dispatch runtime
rm "$src/dispatch/quoted.cpp"
printf '#  include <runtime/registry.h>\n' >"$src/dispatch/angled.cpp"
expect 1 "dispatch/angled.cpp:1:" \
  "$checks/check_include_direction.sh" "$src" support dispatch runtime
rm "$src/dispatch/angled.cpp"
printf '#include "../dispatch/table.h"\n' >"$src/support/relative.h"
expect 1 "support/ lies below dispatch/" \
  "$checks/check_include_direction.sh" "$src" support dispatch runtime
rm "$src/support/relative.h"
# A layer that is not there, or a single layer, is a mistake in the check's own arguments.
expect 2 "$src/memory is not a folder" \
  "$checks/check_include_direction.sh" "$src" support memory runtime
expect 2 "at least two layers" "$checks/check_include_direction.sh" "$src" runtime

# A tree that names backends only in comments, in longer text, and in the allowed file.
src=$work/names
mkdir -p "$src/runtime" "$src/device"
cat >"$src/device/device.cpp" <<'CPP'
// Parses "cuda:1", "cuda" (index 0) or "cpu".
/* A plugin named "cpu" provides the host's kernels;
   "opencl" is another backend. */
const char* kExample = "such as 'cpu', 'cuda' or \"cuda:1\"";
const char* kUrl = "https://example.org/cuda";  // "cuda"
CPP
printf 'bool is_cuda(std::string_view name) { return name == "cuda"; }\n' \
  >"$src/runtime/legacy_names.cpp"
expect 0 "" "$checks/check_backend_names.sh" "$src" runtime/legacy_names.cpp

# A name as a literal of its own fails, in any case, in a header as in a source file.
expect 1 "runtime/legacy_names.cpp:1:" "$checks/check_backend_names.sh" "$src"
printf 'if (backend == "OpenCL") {}  // /* not a comment opener\n' >"$src/device/matches.h"
expect 1 "device/matches.h:1:" "$checks/check_backend_names.sh" "$src" runtime/legacy_names.cpp
printf 'constexpr std::string_view kHost = "cpu";\n' >"$src/device/matches.h"
expect 1 "device/matches.h:1:" "$checks/check_backend_names.sh" "$src" runtime/legacy_names.cpp
printf 'const char* kName = "acme"; /* "cuda" */ const char* kOther = "rocm";\n' \
  >"$src/device/matches.h"
expect 1 "device/matches.h:1:" "$checks/check_backend_names.sh" "$src" runtime/legacy_names.cpp
rm "$src/device/matches.h"
# An allowed file that does not exist is a stale exception.
expect 2 "does not exist" "$checks/check_backend_names.sh" "$src" runtime/renamed.cpp

if ((failures > 0)); then
  echo "$failures check(s) of the source checks failed"
  exit 1
fi
echo "the source checks pass good trees and fail bad ones"
