#!/usr/bin/env bash
# Installs the system packages Backplane builds with, when any are missing. On Debian and
# Ubuntu it uses apt-get (as root, or through sudo); elsewhere it lists what to install.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ pkg-config
  libboost-dev libboost-filesystem-dev libfmt-dev libyaml-cpp-dev libdlpack-dev doctest-dev
  libbenchmark-dev libdnnl-dev zlib1g-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
  xz-utils      # make gpu-bundle packs with tar -J
  python3-sklearn  # the handwritten digits that samples/train_digits trains on
  # The Python package (python/) and its tests; pip and venv for `pip install .`
  python3-dev python3-numpy python3-torch python3-pytest python3-hypothesis
  python3-setuptools python3-venv python3-pip
  libopenmpi-dev openmpi-bin  # bp::distributed (distributed/) and its tests under mpirun
  clang-format  # make format and make format-check: version 14 on Debian 12, as .clang-format
  abigail-tools  # abidiff, for scripts/check-abi.sh
)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
else
  echo "backplane: this is not a Debian-based system, so packages cannot be checked or" \
    "installed here." >&2
  echo "backplane: install the equivalents of: ${packages[*]}" >&2
  echo "backplane: (CMake >= 3.25, Ninja, a C++20 compiler, Boost.DLL + Boost.Filesystem >= 1.74," \
    "fmt, yaml-cpp, DLPack, doctest, oneDNN 2.x built with OpenMP, zlib, clang-format 14," \
    "libabigail's abidiff, scikit-learn's data sets for samples/train_digits)" >&2
  exit 0  # let CMake report precisely what it cannot find
fi

[ ${#missing[@]} -eq 0 ] && exit 0

echo "backplane: installing missing packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "backplane: missing packages and no root rights to install them. Run as root:" >&2
  echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
