#include "runtime/plugin_status.h"

namespace bp::detail {

ErrorCode error_code_for(bp_status status) {
  switch (status) {
    case BP_STATUS_INVALID_ARGUMENT: return ErrorCode::InvalidArgument;
    case BP_STATUS_OUT_OF_MEMORY: return ErrorCode::OutOfMemory;
    case BP_STATUS_UNIMPLEMENTED: return ErrorCode::NotImplemented;
    case BP_STATUS_OK:
    case BP_STATUS_DEVICE_ERROR:
    case BP_STATUS_INTERNAL: return ErrorCode::Backend;
  }
  return ErrorCode::Backend;
}

std::string_view status_description(bp_status status) {
  switch (status) {
    case BP_STATUS_OK: return "ok";
    case BP_STATUS_INVALID_ARGUMENT: return "invalid argument";
    case BP_STATUS_OUT_OF_MEMORY: return "out of memory";
    case BP_STATUS_UNIMPLEMENTED: return "unimplemented";
    case BP_STATUS_DEVICE_ERROR: return "device error";
    case BP_STATUS_INTERNAL: return "internal error";
  }
  return "unknown status";
}

}  // namespace bp::detail
