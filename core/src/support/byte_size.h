// Byte counts for people: "1.5 GiB".
#pragma once

#include <cstdint>
#include <string>

namespace bp::detail {

std::string format_bytes(uint64_t bytes);

}  // namespace bp::detail
