#!/usr/bin/env bash
# Usage: check_include_direction.sh SRC LAYER...
#
# The folders of SRC named as LAYERs, listed from the bottom up, depend one way: a file in one
# may include from its own folder and the folders listed before it, never from one listed
# after it. Prints each include that reaches up, as FILE:LINE, and exits 1 when there is one;
# exits 2 when a LAYER is not a folder of SRC, so that a renamed folder cannot pass unchecked.
set -euo pipefail

src=${1:?usage: check_include_direction.sh SRC LAYER...}
shift
layers=("$@")
if ((${#layers[@]} < 2)); then
  echo "check_include_direction.sh: name at least two layers of $src, the lowest first" >&2
  exit 2
fi
for layer in "${layers[@]}"; do
  if [[ ! -d $src/$layer ]]; then
    echo "check_include_direction.sh: $src/$layer is not a folder; name the layers as they are" >&2
    exit 2
  fi
done

status=0
for ((lower = 0; lower < ${#layers[@]}; ++lower)); do
  for ((upper = lower + 1; upper < ${#layers[@]}; ++upper)); do
    below=${layers[lower]}
    above=${layers[upper]}
    # "runtime/registry.h", <runtime/registry.h> and "../runtime/registry.h" alike.
    pattern="^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<](\.\./)*$above/"
    while IFS= read -r hit; do
      [[ -n $hit ]] || continue
      echo "$hit"
      echo "  $below/ lies below $above/ and must not include from it: move what it needs" \
           "down, or have $above/ hand it over"
      status=1
    done < <(grep -rnE "$pattern" "$src/$below" || true)
  done
done
exit "$status"
