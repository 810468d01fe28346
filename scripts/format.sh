#!/usr/bin/env bash
# Formats the C++, CUDA and OpenCL C sources that git tracks with the root .clang-format
# (`make format`), or with --check changes nothing and fails when any of them is not formatted
# or when a CMake, shell, YAML or JSON file has a line over 100 columns (`make format-check`).
# Golden files of the code generator are left as the generator writes them, and the frozen ABI
# headers of tests/abi/frozen as they were released.
#
# usage: scripts/format.sh [--check] [ROOT]     (ROOT: a git work tree, by default this one)
#
# clang-format's output differs between major versions, so the check uses the version the
# style was tuned with: clang-format-14, or clang-format when it is version 14, or $CLANG_FORMAT.
set -euo pipefail

readonly max_columns=100
readonly diff_lines_per_file=20

check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
root=${1:-"$(dirname "$0")/.."}
cd "$root"

fail() {
  echo "format: $*" >&2
  exit 2
}

find_clang_format() {
  if [ -n "${CLANG_FORMAT:-}" ]; then
    echo "$CLANG_FORMAT"
  elif command -v clang-format-14 >/dev/null 2>&1; then
    echo clang-format-14
  elif command -v clang-format >/dev/null 2>&1 &&
    clang-format --version | grep -q 'version 14\.'; then
    echo clang-format
  else
    fail "clang-format 14 is not installed: run scripts/install-deps.sh" \
      "(Debian 12: apt-get install clang-format), or set CLANG_FORMAT to its path"
  fi
}

git rev-parse --is-inside-work-tree >/dev/null 2>&1 || fail "$PWD is not a git work tree"
[ -f .clang-format ] || fail "$PWD has no .clang-format"

# Tracked files whose names match the patterns, one per line, without the golden files, the
# frozen ABI headers and
# without files deleted from the work tree but not yet from git.
tracked() {
  git ls-files -- "$@" | while IFS= read -r file; do
    case $file in
      tests/codegen/golden/* | tests/abi/frozen/*) ;;
      *) [ ! -f "$file" ] || echo "$file" ;;
    esac
  done
}

mapfile -t sources < <(tracked '*.h' '*.hpp' '*.cpp' '*.cu' '*.cuh' '*.cl')
clang_format=$(find_clang_format)

if ! $check; then
  [ ${#sources[@]} -eq 0 ] || printf '%s\0' "${sources[@]}" |
    xargs -0 "$clang_format" -i --style=file
  exit 0
fi

problems=0

# --dry-run names each unformatted file in its warnings; only those are diffed.
dry_run=""
if [ ${#sources[@]} -gt 0 ]; then
  dry_run=$(printf '%s\0' "${sources[@]}" | xargs -0 "$clang_format" --dry-run --style=file 2>&1) ||
    fail "$clang_format could not check the sources: $(echo "$dry_run" | head -n 5)"
fi
mapfile -t unformatted < <(echo "$dry_run" |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
for file in "${unformatted[@]}"; do
  echo "$file: not formatted (scripts/format.sh or make format rewrites it):"
  "$clang_format" --style=file "$file" | diff -u --label "$file" --label "$file (formatted)" \
    "$file" - | head -n "$diff_lines_per_file" || true
  problems=$((problems + 1))
done

# No formatter here rewrites these files, so only their width is checked. A YAML `func:` line is
# an operator's schema, kept whole on one line as PyTorch writes it.
mapfile -t others < <(tracked 'CMakeLists.txt' '*/CMakeLists.txt' '*.cmake' '*.cmake.in' \
  '*.sh' '.ci/run' 'Makefile' '*.yaml' '*.yml' '*.json')
# Columns are counted with tabs every 8 columns and a UTF-8 character as one, in any locale.
for file in "${others[@]}"; do
  long_lines=$(expand "$file" | LC_ALL=C awk -v max="$max_columns" -v file="$file" '{
    line = $0
    columns = length(line) - gsub(/[\200-\277]/, "", line)
    if (columns > max && !(file ~ /\.ya?ml$/ && $0 ~ /^[ -]*func:/))
      printf "%s:%d: %d columns, over %d\n", file, FNR, columns, max
  }')
  if [ -n "$long_lines" ]; then
    echo "$long_lines"
    problems=$((problems + 1))
  fi
done

if [ "$problems" -gt 0 ]; then
  echo "format: $problems file(s) to fix; \`make format\` formats the C, C++, CUDA and OpenCL" \
    "sources, the long lines of the other files are for a person to break"
  exit 1
fi
echo "format: ${#sources[@]} sources formatted;" \
  "${#others[@]} other files within $max_columns columns"
