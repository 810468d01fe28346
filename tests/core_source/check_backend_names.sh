#!/usr/bin/env bash
# Usage: check_backend_names.sh SRC [ALLOWED...]
#
# No code in SRC recognises a backend by its name: no string literal in a C++ file of SRC is
# a backend's name ("cuda", in any case), outside comments and the ALLOWED files (paths
# relative to SRC). Prints each such literal's line, as FILE:LINE: TEXT, and exits 1 when there
# is one; exits 2 when an ALLOWED file does not exist, so that a stale exception cannot stay.
set -euo pipefail

src=${1:?usage: check_backend_names.sh SRC [ALLOWED...]}
shift
names='cpu|cuda|rocm|hip|opencl|vulkan|metal|acme'
if [[ ! -d $src ]]; then
  echo "check_backend_names.sh: $src is not a folder" >&2
  exit 2
fi
declare -A allowed=()
for file in "$@"; do
  if [[ ! -f $src/$file ]]; then
    echo "check_backend_names.sh: the allowed file $src/$file does not exist" >&2
    exit 2
  fi
  allowed[$src/$file]=1
done

files=()
while IFS= read -r -d '' file; do
  [[ -n ${allowed[$file]:-} ]] || files+=("$file")
done < <(find "$src" -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' \) -print0 | sort -z)
((${#files[@]} > 0)) || exit 0

# Comments are dropped (string literals kept whole, so that "//" inside one is no comment),
# then every literal that is exactly a name is reported.
awk -v literal="\"($names)\"" '
  FNR == 1 { in_comment = 0 }
  {
    code = ""
    for (i = 1; i <= length($0); ) {
      two = substr($0, i, 2)
      one = substr($0, i, 1)
      if (in_comment) {
        if (two == "*/") { in_comment = 0; i += 2 } else { i++ }
      } else if (two == "/*") {
        in_comment = 1; i += 2
      } else if (two == "//") {
        break
      } else if (one == "\"" || one == "\047") {
        code = code one; i++
        while (i <= length($0)) {
          c = substr($0, i, 1); code = code c; i++
          if (c == "\\") { code = code substr($0, i, 1); i++ } else if (c == one) { break }
        }
      } else {
        code = code one; i++
      }
    }
    if (tolower(code) ~ literal) { print FILENAME ":" FNR ": " $0; found = 1 }
  }
  END {
    if (found) {
      print "  these literals name backends: decide by what a plugin declares in its" \
            " descriptor, not by its name"
      exit 1
    }
  }
' "${files[@]}"
