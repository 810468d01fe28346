#!/usr/bin/env bash
# Usage: rerun_tracer_crashes_test.sh CMAKE
#
# rerun-tracer-crashes.sh on small CTest projects whose tests fail in chosen ways: a test after
# which LeakSanitizer's tracer crashed runs once more, and that run decides; a failed check, or
# a tracer crash that came with a leak report, is final and nothing runs again.
set -euo pipefail

cmake=${1:?usage: rerun_tracer_crashes_test.sh CMAKE}
rerun="$(cd "$(dirname "$0")" && pwd)/rerun-tracer-crashes.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A shell test that appends to runs.log each time it runs. "crash-once" crashes the tracer on
# its first run only; "crash-always" on every run; "leak" reports a leak before the tracer
# crashes; "check-then-crash" fails a check before it does; "fail" fails a check.
write_project() {
  local dir=$1; shift
  mkdir -p "$dir"
  {
    echo 'cmake_minimum_required(VERSION 3.20)'
    echo 'project(rerun_check NONE)'
    echo 'enable_testing()'
    for kind in "$@"; do
      echo "add_test(NAME $kind COMMAND sh \${CMAKE_CURRENT_SOURCE_DIR}/test.sh $kind" \
        "\${CMAKE_CURRENT_SOURCE_DIR})"
    done
  } > "$dir/CMakeLists.txt"
  cat > "$dir/test.sh" <<'EOF'
kind=$1; dir=$2
echo "$kind" >> "$dir/runs.log"
runs=$(grep -c "^$kind\$" "$dir/runs.log")
tracer_crash() {
  echo "Tracer caught signal 11: addr=0xa38 pc=0x7f1f2a2e80f0 sp=0x7f1f09b7ed10"
  echo "==1==LeakSanitizer has encountered a fatal error."
  exit 134
}
case $kind in
  passes) exit 0 ;;
  crash-once) [ "$runs" -gt 1 ] && exit 0; tracer_crash ;;
  crash-always) tracer_crash ;;
  leak) echo "==1==ERROR: LeakSanitizer: detected memory leaks"; tracer_crash ;;
  check-then-crash) echo "[doctest] Status: FAILURE!"; tracer_crash ;;
  fail) echo "CHECK( 1 == 2 ) is NOT correct!"; exit 1 ;;
esac
EOF
  "$cmake" -S "$dir" -B "$dir/build" > /dev/null
}

failures=0
# expect NAME WANTED_STATUS WANTED_RUNS KINDS...: runs the project's tests, then the script, and
# checks its exit status and how often each test ran in all ("crash-once=2 passes=1").
expect() {
  local name=$1 wanted_status=$2 wanted_runs=$3; shift 3
  local dir="$work/$name"
  write_project "$dir" "$@"
  ctest --test-dir "$dir/build" > /dev/null 2>&1 || true
  local status=0
  "$rerun" "$dir/build" --test-dir "$dir/build" > "$dir/rerun.out" 2>&1 || status=$?
  local runs
  runs=$(sort "$dir/runs.log" | uniq -c | awk '{printf "%s%s=%s", (NR > 1 ? " " : ""), $2, $1}')
  if [[ $status -ne $wanted_status && ! ($wanted_status -ne 0 && $status -ne 0) ]] ||
     [[ "$runs" != "$wanted_runs" ]]; then
    echo "FAIL $name: exit $status (wanted $wanted_status), runs '$runs' (wanted '$wanted_runs')"
    sed 's/^/  | /' "$dir/rerun.out"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

expect "a tracer crash is run again, and passing then is a pass" \
  0 "crash-once=2 passes=1" passes crash-once
expect "a tracer crash that happens again is a failure" \
  1 "crash-always=2" crash-always
expect "a failed check is final, and nothing runs again" \
  1 "crash-once=1 fail=1" crash-once fail
expect "a leak report is final even when the tracer crashed after it" \
  1 "leak=1" leak
expect "a failed check is final even when the tracer crashed after it" \
  1 "check-then-crash=1" check-then-crash
if "$rerun" "$work/no-such-build" --test-dir "$work/no-such-build" > "$work/no-log.out" 2>&1 ||
   ! grep -q "no ctest log" "$work/no-log.out"; then
  echo "FAIL without a ctest log the failure must stand, and say why"
  failures=$((failures + 1))
else
  echo "ok   without a ctest log the failure stands"
fi
exit $((failures > 0))
