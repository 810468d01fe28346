// Reading structs that a plugin filled. A plugin built against an older minor version of the
// ABI has a shorter struct: every field that does not fit in the struct_size it reports is
// absent, reads as zero (NULL for a function), and is never touched in the plugin's memory.
#pragma once

#include <cstddef>
#include <type_traits>

namespace bp::detail {

template <typename Struct, typename Field>
Field abi_field_or_zero(const Struct& object, size_t offset, Field Struct::*member) {
  return offset + sizeof(Field) <= object.struct_size ? object.*member : Field{};
}

}  // namespace bp::detail

// BP_ABI_FIELD(descriptor, init): the field, or zero when it lies past descriptor.struct_size.
// A macro because only offsetof knows where a field starts.
#define BP_ABI_FIELD(object, field)                                                       \
  ::bp::detail::abi_field_or_zero((object),                                               \
                                  offsetof(std::remove_cvref_t<decltype(object)>, field), \
                                  &std::remove_cvref_t<decltype(object)>::field)
