#!/usr/bin/env bash
# Installs the SDK from this build into a scratch prefix, builds samples/vendor_plugin against
# that prefix alone (a separate CMake project, as a vendor would), and runs its check with the
# plugin found through BACKPLANE_PLUGIN_PATH.
#   build_and_run.sh <backplane build dir> <vendor_plugin source dir> <scratch dir> [extra CXX flags]
set -euo pipefail
build_dir=$1 source_dir=$2 scratch=$3 extra_flags=${4:-}

rm -rf "$scratch"
cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$source_dir" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_CXX_FLAGS="$extra_flags" "${launcher[@]}" >/dev/null
cmake --build "$scratch/build" >/dev/null
BACKPLANE_PLUGIN_PATH="$scratch/build/libbackplane_acme.so" "$scratch/build/acme_check"
