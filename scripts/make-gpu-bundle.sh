#!/usr/bin/env bash
# Packs what checks the CUDA backend on a GPU machine that has the NVIDIA driver and the CUDA
# toolkit's libraries but none of Backplane's build dependencies: bp-info, quickstart, the CUDA
# and op conformance suites, bench_cuda, libbackplane with its plugins, and every shared library
# they load that is neither part of the C runtime nor CUDA's (oneDNN, OpenMP, fmt, Boost,
# Google Benchmark, the OpenCL loader). The archive unpacks into backplane-gpu/, whose
# check-gpu.sh runs everything and writes the logs (see plugins/cuda/README.md).
#
#   scripts/make-gpu-bundle.sh [BUILD_DIR] [ARCHIVE]     (defaults: build, BUILD_DIR/backplane-gpu.tar.xz)
set -euo pipefail

build=${1:-build}
archive=${2:-$build/backplane-gpu.tar.xz}
programs=(bp-info quickstart test_cuda test_ops bench_cuda)

for program in "${programs[@]}"; do
  if [ ! -x "$build/bin/$program" ]; then
    echo "make-gpu-bundle: $build/bin/$program is missing: build with the CUDA toolkit first (make build)" >&2
    exit 1
  fi
done
if [ ! -f "$build/lib/backplane/plugins/libbackplane_cuda.so" ]; then
  echo "make-gpu-bundle: $build has no CUDA plugin: CMake did not find the CUDA toolkit (see plugins/cuda/README.md)" >&2
  exit 1
fi

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
bundle=$staging/backplane-gpu
mkdir -p "$bundle/bin" "$bundle/lib/deps"
for program in "${programs[@]}"; do cp "$build/bin/$program" "$bundle/bin/"; done
# libbackplane finds its plugins in backplane/plugins beside itself.
cp -P "$build"/lib/libbackplane.so* "$bundle/lib/"
cp -r "$build/lib/backplane" "$bundle/lib/"

# The libraries the programs and plugins need, less those every Linux machine has (the C and C++
# runtimes) and those the GPU machine's CUDA installation provides.
is_provided() {
  case "$(basename "$1")" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) return 0 ;;
    libcuda.so*|libcudart.so*|libcublas*.so*|libcudnn*.so*|libnvrtc*.so*) return 0 ;;
    libbackplane.so*) return 0 ;;
  esac
  return 1
}
for binary in "$bundle"/bin/* "$bundle"/lib/backplane/plugins/*.so; do
  ldd "$binary" | awk '/=> \// { print $3 }'
done | sort -u | while read -r library; do
  if ! is_provided "$library"; then cp -L "$library" "$bundle/lib/deps/"; fi
done

cat > "$bundle/run.sh" <<'RUN'
#!/usr/bin/env bash
# run.sh PROGRAM [ARGS...]: one of bin/'s programs, with the bundle's libraries found first and
# the CUDA libraries where the CUDA toolkit or the NVIDIA Python wheels put them.
here=$(cd "$(dirname "$0")" && pwd)
cuda_dirs=""
for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
           /usr/local/nvidia/lib64 $(ls -d /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib 2>/dev/null); do
  [ -d "$dir" ] && cuda_dirs="$cuda_dirs:$dir"
done
export LD_LIBRARY_PATH="$here/lib:$here/lib/deps$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
program=$1
shift
exec "$here/bin/$program" "$@"
RUN

cat > "$bundle/check-gpu.sh" <<'CHECK'
#!/usr/bin/env bash
# check-gpu.sh [LOG_DIR] [tests|bench|all]: bp-info, then the CUDA suite, the op conformance
# suite on every device and quickstart (tests), and bench_cuda with its table of targets (bench),
# each into its own log under LOG_DIR (default: ./gpu-logs); all of them by default, or one half
# where a run must stay short. Exits non-zero when a suite fails or skips itself.
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:-gpu-logs}
part=${2:-all}
case "$part" in
  tests|bench|all) ;;
  *) echo "check-gpu.sh: the second argument is tests, bench or all, not '$part'" >&2; exit 2 ;;
esac
mkdir -p "$logs"
status=0
step() {  # step NAME PROGRAM [ARGS...]
  local name=$1
  shift
  echo "== $name"
  "$here/run.sh" "$@" >"$logs/$name.log" 2>&1
  local code=$?
  tail -n 4 "$logs/$name.log"
  if [ "$code" -eq 77 ]; then
    echo "== $name skipped itself: no usable GPU (bp-info.log says why)"
    status=1
  elif [ "$code" -ne 0 ]; then
    echo "== $name exited with $code"
    status=1
  fi
}
step bp-info bp-info
if [ "$part" != bench ]; then
  step test_cuda test_cuda
  BACKPLANE_CUDA_ALLOW_TF32=1 step test_cuda_tf32 test_cuda "--test-case=*TF32*"
  BACKPLANE_CUDA_CUDNN=0 step test_cuda_no_cudnn test_cuda "--test-case=conv2d*"
  step test_ops test_ops
  step quickstart quickstart
fi
if [ "$part" != tests ]; then
  step bench_cuda bench_cuda --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
  # bench_cuda ends its report with the table of targets (ours / reference, and whether it is met).
  sed -n '/^| what |/,$p' "$logs/bench_cuda.log"
fi
exit $status
CHECK
chmod +x "$bundle/run.sh" "$bundle/check-gpu.sh"

mkdir -p "$(dirname "$archive")"
tar -C "$staging" -cJf "$archive" backplane-gpu
echo "make-gpu-bundle: $archive ($(du -h "$archive" | cut -f1)); on the GPU machine:"
echo "  tar -xJf $(basename "$archive") && backplane-gpu/check-gpu.sh gpu-logs"
