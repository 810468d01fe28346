#!/usr/bin/env bash
# Usage: check_gpu_test.sh GPU_BUNDLE_SCRIPTS_DIR
#
# check-gpu.sh, the GPU bundle's runner, on a stand-in bundle whose suites are a stand-in doctest
# program with four cases: one passes, one fails a check, one aborts its process (as a faulting
# kernel leaves the process's CUDA context unusable for every case after it), one hangs. A suite
# that fails runs again one case at a time, each with its own verdict in the suite's log and a
# hang stopped; the run keeps within its time budget; bad limits are refused. The sanitize part
# runs the CUDA suite under a stand-in compute-sanitizer, memcheck and racecheck, and fails where
# it reports an error; the other parts never run it.
set -euo pipefail

scripts=${1:?usage: check_gpu_test.sh GPU_BUNDLE_SCRIPTS_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bundle=$work/backplane-gpu
mkdir -p "$bundle/bin"
cp "$scripts/run.sh" "$scripts/check-gpu.sh" "$bundle/"
for program in bp-info bp-conformance quickstart; do
  printf '#!/bin/sh\necho "%s ran"\n' "$program" >"$bundle/bin/$program"
done
cat >"$bundle/bin/test_cuda" <<'SUITE'
#!/usr/bin/env bash
# doctest's command line, as far as check-gpu.sh uses it: --list-test-cases, --test-case=FILTER
# (wildcards; a comma escaped with a backslash), or every case in order.
cases=("passes" "fails" "aborts" "hangs, until stopped")
filter='*'
for argument in "$@"; do
  case "$argument" in
    --list-test-cases)
      echo "[doctest] listing all test case names"
      echo "==============================================================================="
      printf '%s\n' "${cases[@]}"
      echo "==============================================================================="
      exit 0 ;;
    --test-case=*) filter=${argument#--test-case=}; filter=${filter//\\,/,} ;;
  esac
done
status=0
for name in "${cases[@]}"; do
  # shellcheck disable=SC2053  # the filter is a pattern
  [[ "$name" == $filter ]] || continue
  case "$name" in
    passes) echo "passes: ok" ;;
    fails) echo "CHECK( 1 == 2 ) is NOT correct!"; status=1 ;;
    aborts) echo "an illegal memory access was encountered"; kill -ABRT $$ ;;
    hangs*) sleep 120 ;;
  esac
done
exit $status
SUITE
cp "$bundle/bin/test_cuda" "$bundle/bin/test_ops"
# Prints its table of targets after a while, as bench_cuda does at its end.
printf '#!/bin/sh\nsleep 3\necho "| what | ours | target |"\necho "| add | 0.95 | met |"\n' \
  >"$bundle/bin/bench_cuda"
chmod +x "$bundle"/bin/*

failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
# expect_line FILE LINE: FILE has LINE as a whole line.
expect_line() {
  grep -qxF -- "$2" "$1" || fail "$(basename "$1") lacks the line '$2'"
}

# Every suite fails; each case alone gets its verdict, and the hang is stopped after its limit.
status=0
CHECK_GPU_CASE_SECONDS=2 "$bundle/check-gpu.sh" "$work/logs" tests >"$work/out" 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "check-gpu.sh exited with $status where a suite failed, not 1"
for suite in test_cuda test_ops; do
  log=$work/logs/$suite.log
  expect_line "$log" "passed: passes"
  expect_line "$log" "failed (exit 1): fails"
  expect_line "$log" "failed (exit 134): aborts"
  expect_line "$log" "stopped after 2 s: hangs, until stopped"
  expect_line "$log" "    CHECK( 1 == 2 ) is NOT correct!"
  expect_line "$work/out" "== $suite: 3 cases failed alone"
done
expect_line "$work/out" "== test_cuda exited with 134"
# The TF32 run's filter matches no case here: it passes, and nothing runs again.
grep -q "each case alone" "$work/logs/test_cuda_tf32.log" &&
  fail "test_cuda_tf32 passed, yet ran again case by case"
expect_line "$work/logs/quickstart.log" "quickstart ran"

# A budget the hang uses up: nothing starts past it, and the run ends on time.
status=0
start=$SECONDS
CHECK_GPU_SECONDS=3 "$bundle/check-gpu.sh" "$work/short" tests >"$work/short.out" 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "check-gpu.sh exited with $status where its time ran out, not 1"
[ $((SECONDS - start)) -le 10 ] || fail "check-gpu.sh took $((SECONDS - start)) s of a 3 s budget"
# What was left of the 3 s when the hang started, by then 1 to 3 s.
grep -qxE "stopped after [123] s: hangs, until stopped" "$work/short/test_cuda.log" ||
  fail "test_cuda.log does not say that the hang was stopped within the budget"
expect_line "$work/short.out" "== quickstart not run: the run's 3 s are spent"
expect_line "$work/short.out" "== test_ops not run: the run's 3 s are spent"
grep -q "test_ops: each case alone" "$work/short.out" &&
  fail "test_ops did not start, yet ran again case by case"

# The benchmarks, last, may use all the time left, past the limit of one step: their table comes
# only at their end.
status=0
CHECK_GPU_STEP_SECONDS=2 "$bundle/check-gpu.sh" "$work/bench" bench >"$work/bench.out" 2>&1 ||
  status=$?
[ "$status" -eq 0 ] || fail "the bench half exited with $status, not 0"
expect_line "$work/bench.out" "| add | 0.95 | met |"
grep -q "sanitizer" "$work/bench.out" "$work/out" && fail "a run without sanitize ran a sanitizer"

# The sanitize part, with a stand-in compute-sanitizer first on PATH: it records its arguments,
# runs the program after its options, and reports an error from racecheck where asked to.
mkdir -p "$work/sanitizer-bin"
cat >"$work/sanitizer-bin/compute-sanitizer" <<'SANITIZER'
#!/usr/bin/env bash
echo "$*" >>"$SANITIZER_CALLS"
tool='' exit_code=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool=$2; shift 2 ;;
    --error-exitcode) exit_code=$2; shift 2 ;;
    --*) shift 2 ;;
    *) break ;;
  esac
done
"$@" || exit $?
if [ "$tool" = racecheck ] && [ -n "${SANITIZER_FINDS:-}" ]; then
  echo "========= ERROR SUMMARY: 1 error"
  exit "$exit_code"
fi
echo "========= ERROR SUMMARY: 0 errors"
SANITIZER
chmod +x "$work/sanitizer-bin/compute-sanitizer"
# The suite under the sanitizers: a program that says what it was asked to run, and passes.
printf '#!/bin/sh\necho "test_cuda ran with $*"\n' >"$bundle/bin/test_cuda"
status=0
PATH="$work/sanitizer-bin:$PATH" SANITIZER_CALLS=$work/calls \
  "$bundle/check-gpu.sh" "$work/sanitize" sanitize >"$work/sanitize.out" 2>&1 || status=$?
[ "$status" -eq 0 ] || fail "a clean sanitize run exited with $status, not 0"
expect_line "$work/sanitize.out" "== compute-sanitizer: $work/sanitizer-bin/compute-sanitizer"
grep -q -- "--tool memcheck --error-exitcode 86 .*run.sh test_cuda --test-case-exclude=" \
  "$work/calls" || fail "memcheck did not run test_cuda with an error exit code"
grep -q -- "--tool racecheck --error-exitcode 86 .*run.sh test_cuda --test-case=" "$work/calls" ||
  fail "racecheck did not run test_cuda's case list with an error exit code"
grep -q "test_cuda ran with --test-case-exclude=" "$work/sanitize/test_cuda_memcheck.log" ||
  fail "test_cuda_memcheck.log lacks the suite's output"
grep -q "ERROR SUMMARY: 0 errors" "$work/sanitize/test_cuda_racecheck.log" ||
  fail "test_cuda_racecheck.log lacks the sanitizer's report"
status=0
PATH="$work/sanitizer-bin:$PATH" SANITIZER_CALLS=$work/calls SANITIZER_FINDS=1 \
  "$bundle/check-gpu.sh" "$work/sanitize-finds" sanitize >"$work/finds.out" 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "a sanitize run with a finding exited with $status, not 1"
grep -q "== test_cuda_racecheck: compute-sanitizer reported errors" "$work/finds.out" ||
  fail "a sanitizer's finding was not reported"

# Limits that are not whole seconds are refused before anything runs.
for setting in CHECK_GPU_SECONDS=soon CHECK_GPU_CASE_SECONDS=0 CHECK_GPU_STEP_SECONDS=-5; do
  status=0
  env "$setting" "$bundle/check-gpu.sh" "$work/refused" >"$work/refused.out" 2>&1 || status=$?
  [ "$status" -eq 2 ] || fail "$setting: exit $status, not 2"
  grep -q "is a number of seconds" "$work/refused.out" ||
    fail "$setting: no message saying what the limit takes"
done
[ ! -e "$work/refused" ] || fail "a refused run wrote logs"

if [ "$failures" -gt 0 ]; then
  echo "--- check-gpu.sh's output:"
  cat "$work/out"
  exit 1
fi
echo "check-gpu.sh: every expectation held"
