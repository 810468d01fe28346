// The SDK's strided loops (backplane/sdk/strided_loop.hpp), which every kernel of this plugin
// is built from, used unqualified here.
#pragma once

#include <backplane/sdk/strided_loop.hpp>

namespace bp::cpu {
using namespace bp::plugin;  // NOLINT(google-build-using-namespace): the plugin's own toolkit
}  // namespace bp::cpu
