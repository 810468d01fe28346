// What a plugin's non-OK status means on the core's side of the ABI.
#pragma once

#include <backplane/abi.h>
#include <backplane/error.h>

#include <string_view>

namespace bp::detail {

// The bp::Error code for a status: BP_STATUS_OUT_OF_MEMORY is ErrorCode::OutOfMemory, so that
// callers can free memory and retry; a status the ABI does not define is ErrorCode::Backend.
ErrorCode error_code_for(bp_status status);

// "out of memory", for messages.
std::string_view status_description(bp_status status);

}  // namespace bp::detail
