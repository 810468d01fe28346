#!/usr/bin/env bash
# run.sh PROGRAM [ARGS...]: one of the bundle's programs (bin/), with the bundle's libraries found
# first and the CUDA libraries where the CUDA toolkit or NVIDIA's Python wheels put them.
here=$(cd "$(dirname "$0")" && pwd)
cuda_dirs=""
for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
           /usr/local/nvidia/lib64 \
           $(ls -d /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib 2>/dev/null); do
  [ -d "$dir" ] && cuda_dirs="$cuda_dirs:$dir"
done
export LD_LIBRARY_PATH="$here/lib:$here/lib/deps$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
program=$1
shift
exec "$here/bin/$program" "$@"
