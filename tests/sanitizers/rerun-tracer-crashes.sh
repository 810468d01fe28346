#!/usr/bin/env bash
# Usage: rerun-tracer-crashes.sh BUILD_DIR CTEST_ARGS...
#
# Called after a sanitizer ctest run failed. LeakSanitizer stops every thread with a ptrace
# "tracer" to scan for leaks at exit, and that tracer itself crashes now and then ("Tracer
# caught signal 11 ... LeakSanitizer has encountered a fatal error"): a fault of the sanitizer
# runtime, seen after a test had passed, that reports no leak. When every failed test of the
# last run failed that way and no other way, they are run once more (ctest --rerun-failed with
# CTEST_ARGS) and that run decides. Any other failure is final: a leak report, a sanitizer
# error, a failed check (doctest's FAILURE status, even when the tracer crashed after it) or a
# timeout.
set -euo pipefail

build_dir=${1:?usage: rerun-tracer-crashes.sh BUILD_DIR CTEST_ARGS...}
shift
log="$build_dir/Testing/Temporary/LastTest.log"
if [[ ! -r "$log" ]]; then
  echo "rerun-tracer-crashes: no ctest log at $log; nothing to judge, the failure stands" >&2
  exit 1
fi

# One line per failed test: "tracer-crash<TAB>name" or "other<TAB>name".
verdicts=$(awk '
  /^[0-9]+\/[0-9]+ Test: / {
    sub(/^[0-9]+\/[0-9]+ Test: /, ""); name = $0; crash = 0; other = 0; next
  }
  /LeakSanitizer has encountered a fatal error/ { crash = 1 }
  /ERROR: (LeakSanitizer|AddressSanitizer)|runtime error:|\[doctest\] Status: FAILURE/ { other = 1 }
  /^Test Failed\.$/ { print ((crash && !other) ? "tracer-crash" : "other") "\t" name }
' "$log")

if [[ -z "$verdicts" ]]; then
  echo "rerun-tracer-crashes: the failure is not a failed test (see the ctest output above)" >&2
  exit 1
fi
if grep -q '^other' <<<"$verdicts"; then
  exit 1
fi

echo "rerun-tracer-crashes: LeakSanitizer's tracer crashed after these tests;" \
  "running them once more:"
cut -f2 <<<"$verdicts" | sed 's/^/  /'
cd "$(dirname "$0")/../.."
ctest --rerun-failed "$@"
