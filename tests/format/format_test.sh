#!/usr/bin/env bash
# scripts/format.sh on a scratch git work tree: what --check accepts, what it refuses and names,
# what it leaves alone, and that formatting makes --check pass.
# usage: tests/format/format_test.sh            (run by `make test`; needs clang-format 14)
set -euo pipefail

source_root=$(cd "$(dirname "$0")/../.." && pwd)
format=$source_root/scripts/format.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "format_test: FAILED: $*" >&2
  [ ! -f "$work/out" ] || sed 's/^/  | /' "$work/out" >&2
  exit 1
}

# Runs the check on the scratch tree; its output goes to $work/out.
check() {
  "$format" --check "$work/tree" >"$work/out" 2>&1
}

mkdir -p "$work/tree/src" "$work/tree/tests/codegen/golden" "$work/tree/build"
cd "$work/tree"
git -c init.defaultBranch=main init -q
cp "$source_root/.clang-format" .
printf '#include <vector>\n\nint twice(int x) { return 2 * x; }\n' >src/twice.cpp
printf 'add_library(twice src/twice.cpp)\n' >CMakeLists.txt
printf -- '- func: %s\n' "add.out($(printf 'Tensor a%s, ' {1..20})Tensor(a!) out) -> Tensor(a!)" \
  >ops.yaml
printf 'int  golden ( ) ;\n' >tests/codegen/golden/Golden.h
git add .
printf 'int  generated ( ) ;\n' >build/Generated.cpp
check || fail "formatted sources, a long operator schema, a golden file and an untracked file" \
  "were refused"

printf 'int  twice(int x)\n{\n  return 2*x;\n}\n' >src/twice.cpp
git add src/twice.cpp
! check || fail "an unformatted source passed the check"
grep -q '^src/twice.cpp: not formatted' "$work/out" || fail "the unformatted file is not named"
grep -q '^+int twice(int x) { return 2 \* x; }$' "$work/out" || fail "no diff shows the fix"

"$format" "$work/tree"
check || fail "the check refused what the formatter wrote"

printf 'add_library(twice %s)\n' "$(printf 'src/twice%s.cpp ' {1..8})" >CMakeLists.txt
! check || fail "a CMake line over 100 columns passed the check"
grep -q '^CMakeLists.txt:1: 1[0-9][0-9] columns, over 100$' "$work/out" ||
  fail "the long CMake line is not named by file and line"

echo "format_test: the format check accepts, refuses and rewrites as it should"
