#include "runtime/kernel_review.h"

#include "runtime/abi_field.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace bp::detail {
namespace {

// Entry `index` of the table, whose entries are as long as the plugin's sizeof(bp_kernel).
const bp_kernel& kernel_entry(const bp_plugin& plugin, int64_t index) {
  const size_t entry_size = plugin.kernels[0].struct_size;
  const auto* bytes = reinterpret_cast<const std::byte*>(plugin.kernels);
  return *reinterpret_cast<const bp_kernel*>(bytes + static_cast<size_t>(index) * entry_size);
}

// The kernel op named "add.out", if ops.yaml has it.
std::optional<OpId> kernel_op_named(std::string_view name) {
  for (size_t i = 0; i < kOpCount; ++i) {
    if (name == kOpNames[i]) return static_cast<OpId>(i);
  }
  return std::nullopt;
}

}  // namespace

KernelReview review_kernels(const bp_plugin& plugin) {
  KernelReview review;
  std::array<bool, kOpCount> seen{};
  for (int64_t i = 0; i < plugin.kernel_count; ++i) {
    const bp_kernel& entry = kernel_entry(plugin, i);
    const char* name = BP_ABI_FIELD(entry, name);
    const uint64_t hash = BP_ABI_FIELD(entry, schema_hash);
    const bp_kernel_fn fn = BP_ABI_FIELD(entry, fn);
    if (name == nullptr) {
      review.refused.push_back({fmt::format("(entry {})", i), "the kernel entry has no op name"});
      continue;
    }
    const std::optional<OpId> op = kernel_op_named(name);
    if (!op) {
      review.refused.push_back(
          {name, fmt::format("this core's ops.yaml has no kernel op '{}': rebuild the plugin "
                             "against this SDK",
                             name)});
      continue;
    }
    const auto index = static_cast<size_t>(*op);
    if (hash != kOpSchemaHashes[index]) {
      review.refused.push_back(
          {name, fmt::format("its schema hash {:#018x} differs from the core's {:#018x} for "
                             "'{}': rebuild the plugin against this SDK",
                             hash, kOpSchemaHashes[index], kOpSchemas[index])});
      continue;
    }
    if (fn == nullptr) {
      review.refused.push_back({name, "the kernel entry has no function"});
      continue;
    }
    if (seen[index]) {
      review.refused.push_back({name, "the plugin lists this op twice; the first entry is used"});
      continue;
    }
    seen[index] = true;
    review.accepted.push_back({*op, fn});
  }
  std::sort(review.accepted.begin(), review.accepted.end(),
            [](const AcceptedKernel& a, const AcceptedKernel& b) { return a.op < b.op; });
  return review;
}

}  // namespace bp::detail
