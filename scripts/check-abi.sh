#!/usr/bin/env bash
# Checks that an abi.h keeps the ABI of the newest released header (tests/abi/frozen/<newest>):
# builds tests/abi/abi_probe.c with -g from each, and compares the two with abidiff
# (abigail-tools). docs/abi-policy.md has the rules; in short, the only change allowed is new
# members at the end of a struct that begins with struct_size (listed below), which the core
# treats as absent in older plugins. Enumerators added to an enum are no change to abidiff, and
# new types are new functions of the probe, which the check leaves out. Anything else fails,
# with abidiff's report.
#
# usage: scripts/check-abi.sh [INCLUDE_DIR]
#   INCLUDE_DIR: the folder holding backplane/abi.h to check; by default sdk/include
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
include_dir=${1:-$root/sdk/include}
probe=$root/tests/abi/abi_probe.c
# The structs that carry their size in struct_size: members appended to them are allowed.
sized_structs="bp_plugin bp_kernel bp_device_properties bp_counter bp_core_services"
readonly sized_structs="$sized_structs bp_collectives"

fail() {
  echo "check-abi: $*" >&2
  exit 1
}

command -v abidiff >/dev/null 2>&1 ||
  fail "abidiff is not installed: run scripts/install-deps.sh (Debian: apt-get install" \
    "abigail-tools)"
[ -f "$include_dir/backplane/abi.h" ] || fail "$include_dir/backplane/abi.h does not exist"

newest=$(find "$root/tests/abi/frozen" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' |
  sort -V | tail -n 1)
[ -n "$newest" ] || fail "no frozen header in $root/tests/abi/frozen"
frozen_dir=$root/tests/abi/frozen/$newest

version_of() {
  local major minor
  major=$(sed -n 's/^#define BP_ABI_MAJOR \([0-9]*\)$/\1/p' "$1/backplane/abi.h")
  minor=$(sed -n 's/^#define BP_ABI_MINOR \([0-9]*\)$/\1/p' "$1/backplane/abi.h")
  [ -n "$major" ] && [ -n "$minor" ] || fail "$1/backplane/abi.h defines no BP_ABI_MAJOR/MINOR"
  echo "$major.$minor"
}
released=$(version_of "$frozen_dir")
checked=$(version_of "$include_dir")
[ "$released" = "$newest" ] ||
  fail "tests/abi/frozen/$newest/backplane/abi.h says ABI $released: frozen headers lie in" \
    "the folder of their version"
if [ "${checked%%.*}" != "${released%%.*}" ]; then
  fail "$include_dir/backplane/abi.h is ABI $checked, the newest released is $released: a new" \
    "major version starts a new series of frozen headers (docs/abi-policy.md)"
fi
if [ "${checked#*.}" -lt "${released#*.}" ]; then
  fail "$include_dir/backplane/abi.h is ABI $checked, older than the released $released"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build_probe() {
  "${CC:-cc}" -std=c99 -g -O0 -shared -fPIC -fvisibility=hidden -I"$1" "$probe" -o "$2" ||
    fail "the probe does not compile against $1/backplane/abi.h"
}
build_probe "$frozen_dir" "$work/released.so"
build_probe "$include_dir" "$work/checked.so"

status=0
# --no-added-syms: the probe of a type that a newer minor version adds is a new function.
abidiff --no-added-syms --leaf-changes-only --no-show-locs "$work/released.so" "$work/checked.so" \
  >"$work/report" 2>&1 || status=$?
if [ "$status" -eq 0 ]; then
  echo "check-abi: ABI $checked keeps the ABI of the released $released"
  exit 0
fi

# abidiff's exit status is a bit set: 1 an error, 2 a usage error, 4 an ABI change, 8 an
# incompatible change (a removed function). Only a change (4) alone may be allowed, and only
# when every line of the report is an appended member of a struct in $sized_structs.
unexpected=""
if [ "$status" -eq 4 ]; then
  unexpected=$(awk -v sized=" $sized_structs " '
    function bad(why) { print why ": " $0; exit }
    /^(Leaf changes|Changed leaf types|Removed\/Changed\/Added (functions|variables)) summary/ {
      next
    }
    /^$/ { next }
    /^'\''struct [A-Za-z_0-9]+'\'' changed:$/ {
      name = $2; gsub(/'\''/, "", name)
      if (index(sized, " " name " ") == 0) bad("a struct without struct_size changed")
      old_bits = -1; next
    }
    /^  type size changed from [0-9]+ to [0-9]+ \(in bits\)$/ && name != "" {
      old_bits = $5 + 0; if ($7 + 0 <= old_bits) bad("the struct shrank"); next
    }
    /^  [0-9]+ data members? insertions?:$/ && name != "" { next }
    /^    .*, at offset [0-9]+ \(in bits\)$/ && name != "" {
      offset = $(NF - 2) + 0
      if (old_bits < 0 || offset < old_bits) bad("a member was inserted before the old end")
      next
    }
    { bad("a change that is not a member appended to a struct with struct_size") }
  ' "$work/report")
fi
if [ "$status" -ne 4 ] || [ -n "$unexpected" ]; then
  echo "check-abi: ABI $checked breaks the ABI of the released $released" \
    "(abidiff exit status $status)${unexpected:+; first: $unexpected}" >&2
  sed 's/^/  | /' "$work/report" >&2
  echo "check-abi: a minor version may only append members to structs that begin with" \
    "struct_size; anything else needs a new major version (docs/abi-policy.md)" >&2
  exit 1
fi
echo "check-abi: ABI $checked keeps the ABI of the released $released, and appends to" \
  "structs that carry struct_size:"
sed 's/^/  | /' "$work/report"
