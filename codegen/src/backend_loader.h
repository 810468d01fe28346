// Reading a backend YAML (gen_backend_stubs style) against the ops it names:
//   backend: OpenCL
//   cpp_namespace: bp::opencl
//   version: 1.0.0        # optional, default 0.1.0
//   supported: [add.out, mm.out]
#pragma once

#include <string>

#include "model.h"

namespace bp::codegen {

// The config's `supported` entries point into `functions`, which must outlive it.
BackendConfig load_backend_config(const std::string& path, const NativeFunctions& functions);
// The same from text already in memory; `path` is used in messages only.
BackendConfig parse_backend_config(const std::string& yaml_text, const std::string& path,
                                   const NativeFunctions& functions);

}  // namespace bp::codegen
