#!/usr/bin/env bash
# Packs what checks the CUDA backend on a GPU machine that has the NVIDIA driver and the CUDA
# toolkit's libraries but none of Backplane's build dependencies: bp-info, quickstart, the CUDA
# and op conformance suites, bp-conformance, bench_cuda, libbackplane with its plugins, and every
# shared library they load that is neither part of the C runtime nor CUDA's (oneDNN, OpenMP, fmt,
# Boost, Google Benchmark, the OpenCL loader). The archive unpacks into backplane-gpu/, whose
# check-gpu.sh (scripts/gpu-bundle/) runs everything and writes the logs (see
# plugins/cuda/README.md).
#
#   scripts/make-gpu-bundle.sh [BUILD_DIR] [ARCHIVE]
#   (defaults: build, BUILD_DIR/backplane-gpu.tar.xz)
set -euo pipefail

build=${1:-build}
archive=${2:-$build/backplane-gpu.tar.xz}
programs=(bp-info bp-conformance quickstart test_cuda test_ops bench_cuda)

for program in "${programs[@]}"; do
  if [ ! -x "$build/bin/$program" ]; then
    echo "make-gpu-bundle: $build/bin/$program is missing:" \
      "build with the CUDA toolkit first (make build)" >&2
    exit 1
  fi
done
if [ ! -f "$build/lib/backplane/plugins/libbackplane_cuda.so" ]; then
  echo "make-gpu-bundle: $build has no CUDA plugin: CMake did not find the CUDA toolkit" \
    "(see plugins/cuda/README.md)" >&2
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
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*) return 0 ;;
    libstdc++.so*|libgcc_s.so*) return 0 ;;
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

cp "$(dirname "$0")/gpu-bundle/run.sh" "$(dirname "$0")/gpu-bundle/check-gpu.sh" "$bundle/"

mkdir -p "$(dirname "$archive")"
tar -C "$staging" -cJf "$archive" backplane-gpu
echo "make-gpu-bundle: $archive ($(du -h "$archive" | cut -f1)); on the GPU machine:"
echo "  tar -xJf $(basename "$archive") && backplane-gpu/check-gpu.sh gpu-logs"
