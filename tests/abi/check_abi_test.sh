#!/usr/bin/env bash
# scripts/check-abi.sh on scratch copies of sdk/include/backplane/abi.h: it accepts today's
# header and one with a member appended to bp_plugin, and refuses, naming the change, headers
# that reorder, retype or remove members or that grow a struct passed by value.
# usage: tests/abi/check_abi_test.sh SOURCE_ROOT        (run by `make test`; needs abidiff)
set -euo pipefail

source_root=$1
check=$source_root/scripts/check-abi.sh
header=$source_root/sdk/include/backplane/abi.h
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "check_abi_test: FAILED: $*" >&2
  [ ! -f "$work/out" ] || sed 's/^/  | /' "$work/out" >&2
  exit 1
}

# variant NAME PYTHON_REPLACEMENT: a copy of the header with one text replaced, in $work/NAME.
variant() {
  mkdir -p "$work/$1/backplane"
  python3 - "$header" "$work/$1/backplane/abi.h" "$2" "$3" <<'EOF'
import sys
source, target, old, new = sys.argv[1:]
text = open(source).read()
if text.count(old) != 1:
    sys.exit(f"check_abi_test: the header does not contain {old!r} once")
open(target, "w").write(text.replace(old, new))
EOF
}

accepts() {
  bash "$check" "$work/$1" >"$work/out" 2>&1 || fail "$1: the check refused it"
  grep -q "$2" "$work/out" || fail "$1: the output does not say '$2'"
}

refuses() {
  if bash "$check" "$work/$1" >"$work/out" 2>&1; then fail "$1: the check accepted it"; fi
  grep -q "breaks the ABI of the released" "$work/out" || fail "$1: no verdict in the output"
  grep -q "$2" "$work/out" || fail "$1: the output does not name '$2'"
}

mkdir -p "$work/today/backplane"
cp "$header" "$work/today/backplane/abi.h"
accepts today "keeps the ABI of the released"

variant appended "  const bp_collectives* collectives;
} bp_plugin;" "  const bp_collectives* collectives;
  bp_status (*appended)(int32_t device);
} bp_plugin;"
accepts appended "'typedef bp_status (typedef int32_t)\* appended', at offset"

variant reordered "  const char* name;    /* backend name" "  const char* version;    /* swapped"
python3 - "$work/reordered/backplane/abi.h" <<'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
old = '  const char* version; /* the plugin\'s own version, "1.2.0" */'
if text.count(old) != 1:
    sys.exit("check_abi_test: the header does not declare bp_plugin::version as expected")
open(path, "w").write(text.replace(old, "  const char* name;"))
EOF
refuses reordered "'const char\* name' offset changed from 128 to 192"

variant retyped "  int64_t kernel_count;" "  int32_t kernel_count;"
refuses retyped "of 'bp_plugin::kernel_count' changed"

variant removed "  const char* description; /*" "  /*"
refuses removed "'const char\* description', at offset"

variant by_value "  uint8_t has_value;
} bp_optional_int;" "  uint8_t has_value;
  uint8_t appended;
} bp_optional_int;"
refuses by_value "bp_abi_probe_optional_int"

echo "check_abi_test: passed"
