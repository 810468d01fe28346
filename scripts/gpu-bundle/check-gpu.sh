#!/usr/bin/env bash
# check-gpu.sh [LOG_DIR] [tests|bench|sanitize|all]: bp-info, then the CUDA suite, the op
# conformance suite on every device, bp-conformance on cuda:0 and quickstart (tests), and
# bench_cuda with its table of targets (bench), each into its own log under LOG_DIR (default:
# ./gpu-logs); both by default (all), or one where a run must stay short. `sanitize`, never part
# of all, runs the CUDA suite under compute-sanitizer instead: memcheck over every case but the
# one of 2^32 elements, racecheck over the cases whose kernels share memory within a block. Exits
# non-zero when a suite fails or skips itself, or a sanitizer reports an error.
#
# The whole run keeps within CHECK_GPU_SECONDS (default 540), so that what it found comes back
# from a machine lent for a few minutes; no step but the last (bench_cuda, whose table of targets
# comes only at its end) runs longer than CHECK_GPU_STEP_SECONDS (default 300). A suite that
# fails is run again one test case at a time, each for at most CHECK_GPU_CASE_SECONDS (default
# 60): a kernel that faults leaves its process's CUDA context unusable, so every case after it
# would fail too, and a hang would stop the rest. Each case's verdict, and the output of those
# that failed, go to the end of the suite's log.
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:-gpu-logs}
part=${2:-all}
case "$part" in
  tests|bench|sanitize|all) ;;
  *)
    echo "check-gpu.sh: the second argument is tests, bench, sanitize or all, not '$part'" >&2
    exit 2 ;;
esac
for limit in CHECK_GPU_SECONDS CHECK_GPU_STEP_SECONDS CHECK_GPU_CASE_SECONDS; do
  value=${!limit:-1}
  if ! [[ "$value" =~ ^[1-9][0-9]*$ ]]; then
    echo "check-gpu.sh: $limit is a number of seconds (a whole number above 0), not '$value'" >&2
    exit 2
  fi
done
deadline=$((SECONDS + ${CHECK_GPU_SECONDS:-540}))
step_seconds=${CHECK_GPU_STEP_SECONDS:-300}
case_seconds=${CHECK_GPU_CASE_SECONDS:-60}
mkdir -p "$logs"
status=0

# Seconds a program may still run: at most `cap`, and never past the deadline.
seconds_left() {  # seconds_left CAP
  local left=$((deadline - SECONDS))
  echo $((left < $1 ? left : $1))
}

# Runs PROGRAM (a bin/ name) for at most SECONDS with its output, line-buffered so that a program
# stopped midway leaves what it printed, in LOG; returns its exit code (124 when it was stopped).
run_logged() {  # run_logged SECONDS LOG PROGRAM [ARGS...]
  local seconds=$1 log=$2
  shift 2
  timeout --kill-after=5 "$seconds" stdbuf -oL -eL "$here/run.sh" "$@" >"$log" 2>&1
}

# The last step's exit code, or nothing where it did not start for lack of time.
last_code=0
step() {  # step NAME PROGRAM [ARGS...]
  local name=$1
  shift
  local seconds
  seconds=$(seconds_left "$step_seconds")
  if [ "$seconds" -le 0 ]; then
    echo "== $name not run: the run's ${CHECK_GPU_SECONDS:-540} s are spent"
    last_code=
    status=1
    return
  fi
  echo "== $name"
  run_logged "$seconds" "$logs/$name.log" "$@"
  last_code=$?
  tail -n 4 "$logs/$name.log"
  case "$last_code" in
    0) ;;
    77) echo "== $name skipped itself: no usable GPU (bp-info.log says why)"; status=1 ;;
    124|137) echo "== $name stopped after $seconds s"; status=1 ;;
    *) echo "== $name exited with $last_code"; status=1 ;;
  esac
}

# A doctest suite: one run of every case, and where that fails, each case alone.
suite() {  # suite NAME PROGRAM [ARGS...]
  step "$@"
  case "$last_code" in ''|0|77) return ;; esac
  local name=$1 program=$2
  shift 2
  local log=$logs/$name.log case_log=$logs/$name.case.tmp
  local cases seconds
  seconds=$(seconds_left "$case_seconds")
  if [ "$seconds" -le 0 ] ||
     ! cases=$(timeout "$seconds" "$here/run.sh" "$program" "$@" --list-test-cases \
                 2>/dev/null); then
    echo "== $name: its test cases could not be listed, so none ran alone"
    return
  fi
  echo "== $name: each case alone (verdicts at the end of $log)"
  printf '\n== each case alone, at most %s s each\n' "$case_seconds" >>"$log"
  local test_case code failed=0 unrun=0
  while IFS= read -r test_case; do
    # doctest's listing frames the names with its own lines.
    case "$test_case" in ''|'[doctest]'*|'====='*) continue ;; esac
    seconds=$(seconds_left "$case_seconds")
    if [ "$seconds" -le 0 ]; then
      echo "not run (no time left): $test_case" >>"$log"
      unrun=$((unrun + 1))
      continue
    fi
    # A comma separates doctest's filters unless escaped.
    run_logged "$seconds" "$case_log" "$program" "$@" "--test-case=${test_case//,/\\,}"
    code=$?
    case "$code" in
      0) echo "passed: $test_case" >>"$log" ;;
      77) echo "skipped: $test_case" >>"$log" ;;
      *)
        failed=$((failed + 1))
        if [ "$code" -eq 124 ] || [ "$code" -eq 137 ]; then
          echo "stopped after $seconds s: $test_case" | tee -a "$log"
        else
          echo "failed (exit $code): $test_case" | tee -a "$log"
        fi
        tail -n 40 "$case_log" | sed 's/^/    /' >>"$log"
        ;;
    esac
  done <<<"$cases"
  rm -f "$case_log"
  if [ "$unrun" -gt 0 ]; then
    echo "== $name: $failed cases failed alone, $unrun not run for lack of time"
  else
    echo "== $name: $failed cases failed alone"
  fi
}

# compute-sanitizer: on PATH, else where the CUDA toolkit puts it (bin/, or its own folder), else
# anywhere under /opt/nvidia.
find_sanitizer() {
  local found
  found=$(command -v compute-sanitizer 2>/dev/null) && { echo "$found"; return 0; }
  for found in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda*/bin/compute-sanitizer \
               /usr/local/cuda*/compute-sanitizer/compute-sanitizer; do
    [ -x "$found" ] && { echo "$found"; return 0; }
  done
  found=$(find /opt/nvidia -maxdepth 5 -name compute-sanitizer -type f -perm -u+x 2>/dev/null |
            head -n 1)
  [ -n "$found" ] && { echo "$found"; return 0; }
  return 1
}

# Exit code of compute-sanitizer when it reports an error, distinct from the suite's own.
sanitizer_error=86

# test_cuda under compute-sanitizer's TOOL, with the suite's ARGS, into LOG_DIR/NAME.log (the
# tool's report and the suite's output together), for at most the step's time.
sanitize() {  # sanitize NAME TOOL [ARGS...]
  local name=$1 tool=$2
  shift 2
  local seconds
  seconds=$(seconds_left "$step_seconds")
  if [ "$seconds" -le 0 ]; then
    echo "== $name not run: the run's ${CHECK_GPU_SECONDS:-540} s are spent"
    status=1
    return
  fi
  echo "== $name ($sanitizer --tool $tool)"
  # API errors are left out: the suite provokes some on purpose (out of memory, a missing GPU).
  timeout --kill-after=5 "$seconds" stdbuf -oL -eL "$sanitizer" --tool "$tool" \
    --error-exitcode "$sanitizer_error" --report-api-errors no --target-processes all \
    "$here/run.sh" test_cuda "$@" >"$logs/$name.log" 2>&1
  local code=$?
  tail -n 4 "$logs/$name.log"
  case "$code" in
    0) ;;
    "$sanitizer_error") echo "== $name: compute-sanitizer reported errors ($logs/$name.log)"
       status=1 ;;
    124|137) echo "== $name stopped after $seconds s (its findings so far are in the log)"
       status=1 ;;
    *) echo "== $name exited with $code"; status=1 ;;
  esac
}

step bp-info bp-info
if [ "$part" = sanitize ]; then
  if ! sanitizer=$(find_sanitizer); then
    echo "== sanitize not run: no compute-sanitizer on PATH, in /usr/local/cuda*/bin," \
      "/usr/local/cuda*/compute-sanitizer or under /opt/nvidia"
    exit 1
  fi
  echo "== compute-sanitizer: $sanitizer"
  # Every case but the one over 2^32 elements, which memcheck would take far past any budget.
  sanitize test_cuda_memcheck memcheck \
    "--test-case-exclude=kernels index tensors of 2^32 elements and more*"
  # The GPU cases whose kernels share memory within a block (racecheck checks shared memory
  # only): reductions, softmax, the norms, products, pooling, and conv2d with the transposes of
  # its channels-last formulation.
  BACKPLANE_CUDA_CONV_LAYOUT=nhwc sanitize test_cuda_racecheck racecheck \
    "--test-case=reductions*,softmax*,layer norm*,batch norm*,matrix products*,pooling*,conv2d*"
  exit $status
fi
if [ "$part" != bench ]; then
  suite test_cuda test_cuda
  BACKPLANE_CUDA_ALLOW_TF32=1 suite test_cuda_tf32 test_cuda "--test-case=*TF32*"
  BACKPLANE_CUDA_CUDNN=0 suite test_cuda_no_cudnn test_cuda "--test-case=conv2d*"
  # conv2d on cuDNN's channels-last formulation wherever it runs, not only where it measured
  # faster: the transposes to and from NHWC on every shape of the case.
  BACKPLANE_CUDA_CONV_LAYOUT=nhwc suite test_cuda_nhwc test_cuda "--test-case=conv2d*"
  # The conformance suite on cuda:0 against the CPU plugin. An OpenCL device there (PoCL, say)
  # is not what this checks, and a fresh machine's PoCL compiles each of its kernels first, which
  # takes far longer than the suite itself does without it.
  BACKPLANE_BACKENDS=cpu,cuda suite test_ops test_ops
  # The convolutions' cases again through the plugin's own kernels (conv2d, and its gradients).
  BACKPLANE_CUDA_CUDNN=0 BACKPLANE_BACKENDS=cpu,cuda suite test_ops_no_cudnn test_ops \
    "--test-case=*conv*"
  # And on cuDNN's channels-last formulation wherever it runs.
  BACKPLANE_CUDA_CONV_LAYOUT=nhwc BACKPLANE_BACKENDS=cpu,cuda suite test_ops_nhwc test_ops \
    "--test-case=*conv*"
  # The vendor's proof on cuda:0: every kernel op through the conformance cases, and the plugin
  # contract (copies, events, threads, shutdown).
  BACKPLANE_BACKENDS=cpu,cuda step bp-conformance bp-conformance --backend cuda \
    --junit "$logs/cuda-conformance.xml"
  step quickstart quickstart
fi
if [ "$part" != tests ]; then
  # The last step: all the time left, which nothing after it needs.
  step_seconds=$((deadline - SECONDS)) step bench_cuda bench_cuda --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true
  # bench_cuda ends its report with the table of targets (ours / reference, and whether it is met).
  sed -n '/^| what |/,$p' "$logs/bench_cuda.log"
fi
exit $status
