#!/usr/bin/env bash
# Installs the SDK from this build into a scratch prefix and checks what a vendor finds there:
# every plugin this build made, the docs, and samples/vendor_plugin as the plugin guide names
# them. Then builds the installed sample against that prefix alone (a separate CMake project,
# with no build type, as in the guide's recipe), checks that its plugin was still compiled with
# optimisation, runs its check with the plugin found through BACKPLANE_PLUGIN_PATH, and proves
# it with the installed bp-conformance.
#   build_and_run.sh <backplane build dir> <vendor_plugin source dir> <scratch dir>
#                    [extra CXX flags]
set -euo pipefail
build_dir=$1 source_dir=$2 scratch=$3 extra_flags=${4:-}
prefix=$scratch/prefix

fail() { echo "vendor_plugin: $*" >&2; exit 1; }

rm -rf "$scratch"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null

for plugin in "$build_dir"/lib/backplane/plugins/*.so; do
  [ -f "$prefix/lib/backplane/plugins/${plugin##*/}" ] ||
    fail "make install left out the bundled plugin ${plugin##*/}"
done
for doc in plugin-guide.md environment.md; do
  [ -f "$prefix/share/backplane/docs/$doc" ] || fail "make install left out docs/$doc"
done
sample=$prefix/share/backplane/samples/vendor_plugin
diff -r "$source_dir" "$sample" >/dev/null ||
  fail "the installed $sample differs from samples/vendor_plugin"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$sample" -B "$scratch/build" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="$extra_flags" "${launcher[@]}" >/dev/null
grep -E '"command": .* -O2 .*ops/elementwise\.cpp' "$scratch/build/compile_commands.json" \
    >/dev/null ||
  fail "a project without CMAKE_BUILD_TYPE built the plugin's kernels without -O2"
cmake --build "$scratch/build" >/dev/null
BACKPLANE_PLUGIN_PATH="$scratch/build/libbackplane_acme.so" "$scratch/build/acme_check"
# The vendor's own proof, with nothing but the installed SDK: bp-conformance passes the plugin.
"$prefix/bin/bp-conformance" --plugin "$scratch/build/libbackplane_acme.so" \
    --junit "$scratch/acme-conformance.xml" > "$scratch/acme-conformance.txt" ||
  fail "bp-conformance fails the vendor's plugin: $(cat "$scratch/acme-conformance.txt")"
grep -q "coverage: acme implements 3 of the" "$scratch/acme-conformance.txt" ||
  fail "bp-conformance did not report acme's coverage: $(cat "$scratch/acme-conformance.txt")"

# The installed Python package, where the build made one: it finds the installed libbackplane by
# itself (nothing in the environment but the plugin's path), and the vendor's device works from
# Python. The prefix stands in for /usr/local, whose folder Debian's Python searches already.
module=$(find "$prefix" -path '*/backplane/_C*.so' -print -quit)
[ -n "$module" ] || exit 0
package_parent=$(dirname "$(dirname "$module")")
python=$(sed -n 's/^Python3_EXECUTABLE:FILEPATH=//p' "$build_dir/CMakeCache.txt")
env -i BACKPLANE_PLUGIN_PATH="$scratch/build/libbackplane_acme.so" "$python" -I -c "
import sys
sys.path.insert(0, '$package_parent')
import backplane as bp
assert bp.__file__.startswith('$prefix'), bp.__file__
x = bp.tensor([[1., -2.], [3., 4.]], device='acme:0')
y = bp.relu(x * 2 + x)
assert str(y.device) == 'acme:0', y.device
assert y.cpu().tolist() == [[3., 0.], [9., 12.]], y
print(bp.softmax(bp.tensor([[1., 2.], [3., 4.]]), dim=1))
" || fail "the installed Python package does not run the vendor's plugin"
