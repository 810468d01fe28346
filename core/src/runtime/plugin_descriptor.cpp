#include "runtime/plugin_descriptor.h"

#include "runtime/plugin_rejected.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <string_view>
#include <utility>

namespace bp::detail {
namespace {

// How far a descriptor of ABI 1.`minor` reaches: each minor version added fields at its end. A
// plugin of a newer minor version than the core's has at least the core's fields.
constexpr size_t descriptor_size_of_minor(uint32_t minor) {
  static_assert(BP_ABI_MINOR == 6, "a new minor version: add the size of its descriptor here");
  switch (minor) {
    case 0: return offsetof(bp_plugin, kernel_count) + sizeof(bp_plugin::kernel_count);
    case 1: return offsetof(bp_plugin, read_counters) + sizeof(bp_plugin::read_counters);
    case 2: return offsetof(bp_plugin, event_elapsed) + sizeof(bp_plugin::event_elapsed);
    case 3: return offsetof(bp_plugin, attach_core) + sizeof(bp_plugin::attach_core);
    // 1.4 ends with an int32_t, and its descriptor with the padding after it, where 1.6's
    // pointer begins; 1.5 added to the core services, not to the descriptor.
    case 4:
    case 5: return offsetof(bp_plugin, collectives);
    default: return sizeof(bp_plugin);
  }
}

// Every plugin of ABI 1.x fills at least the fields of 1.0.
constexpr size_t kRequiredDescriptorSize = descriptor_size_of_minor(0);

constexpr size_t kRequiredKernelEntrySize = offsetof(bp_kernel, fn) + sizeof(bp_kernel::fn);

bool is_backend_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::islower(c) != 0 || std::isdigit(c) != 0 || c == '_';
  });
}

// A descriptor function's name, and whether the plugin set it.
using NamedFunction = std::pair<const char*, bool>;

// Some descriptor functions only make sense together: a plugin sets all of a `group` or none.
// `rule` says so in the message that lists the missing ones.
template <size_t N>
void check_all_or_none(const NamedFunction (&functions)[N], std::string_view group,
                       std::string_view rule) {
  const auto given =
      static_cast<size_t>(std::count_if(std::begin(functions), std::end(functions),
                                        [](const auto& function) { return function.second; }));
  if (given == 0 || given == N) return;
  std::string missing;
  for (const auto& [name, present] : functions) {
    if (!present) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", name);
  }
  throw PluginRejected(fmt::format("it sets some {} but not {}: {}", group, missing, rule));
}

void check_memory_functions(const bp_plugin& plugin) {
  const NamedFunction functions[] = {
      {"allocate", plugin.allocate != nullptr},
      {"deallocate", plugin.deallocate != nullptr},
      {"copy_host_to_device", plugin.copy_host_to_device != nullptr},
      {"copy_device_to_host", plugin.copy_device_to_host != nullptr},
      {"copy_device_to_device", plugin.copy_device_to_device != nullptr},
  };
  check_all_or_none(functions, "memory functions",
                    "a plugin that manages device memory sets allocate, deallocate and the three "
                    "copies; one whose devices use host memory sets none");
}

void check_event_functions(const bp_plugin& plugin) {
  const NamedFunction functions[] = {
      {"event_create", plugin.event_create != nullptr},
      {"event_destroy", plugin.event_destroy != nullptr},
      {"event_record", plugin.event_record != nullptr},
      {"event_query", plugin.event_query != nullptr},
      {"event_synchronize", plugin.event_synchronize != nullptr},
      {"event_elapsed", plugin.event_elapsed != nullptr},
  };
  check_all_or_none(functions, "event functions",
                    "a plugin with events (ABI 1.2) sets all six; one whose calls finish their "
                    "work before returning sets none");
}

// The collectives table (ABI 1.6), where the plugin has one: long enough for 1.6's members, all
// of them set, and an identifier size the group can pass around.
void check_collectives(const bp_plugin& plugin) {
  const bp_collectives* table = plugin.collectives;
  if (table == nullptr) return;
  constexpr size_t kRequiredSize =
      offsetof(bp_collectives, reduce_scatter) + sizeof(bp_collectives::reduce_scatter);
  if (table->struct_size < kRequiredSize) {
    throw PluginRejected(fmt::format(
        "its collectives table is {} bytes, smaller than the {} bytes of ABI 1.6's: it is "
        "corrupt; rebuild the plugin against this SDK",
        table->struct_size, kRequiredSize));
  }
  const NamedFunction functions[] = {
      {"make_communicator_id", table->make_communicator_id != nullptr},
      {"communicator_create", table->communicator_create != nullptr},
      {"communicator_destroy", table->communicator_destroy != nullptr},
      {"all_reduce", table->all_reduce != nullptr},
      {"broadcast", table->broadcast != nullptr},
      {"all_gather", table->all_gather != nullptr},
      {"reduce_scatter", table->reduce_scatter != nullptr},
  };
  for (const auto& [name, present] : functions) {
    if (!present) {
      throw PluginRejected(fmt::format(
          "its collectives table has no {} function: a plugin with collectives sets all seven, "
          "or leaves `collectives` NULL",
          name));
    }
  }
  if (table->communicator_id_size == 0 ||
      table->communicator_id_size > BP_MAX_COMMUNICATOR_ID_BYTES) {
    throw PluginRejected(
        fmt::format("its communicator identifiers are {} bytes; they must be 1 to {} "
                    "(BP_MAX_COMMUNICATOR_ID_BYTES)",
                    table->communicator_id_size, BP_MAX_COMMUNICATOR_ID_BYTES));
  }
}

// Kernel entries are laid out with the plugin's own sizeof(bp_kernel), which its first entry
// reports: a plugin of a newer minor version may have longer entries.
void check_kernel_table(const bp_plugin& plugin) {
  if (plugin.kernel_count == 0) return;
  if (plugin.kernel_count < 0 || plugin.kernels == nullptr) {
    throw PluginRejected(fmt::format(
        "its kernel table is malformed ({} entries at {}): rebuild the plugin against this SDK",
        plugin.kernel_count, fmt::ptr(plugin.kernels)));
  }
  const size_t entry_size = plugin.kernels[0].struct_size;
  if (entry_size < kRequiredKernelEntrySize || entry_size % alignof(bp_kernel) != 0) {
    throw PluginRejected(fmt::format(
        "its kernel entries are {} bytes, which no ABI {}.x plugin has (at least {}, a multiple "
        "of {}): rebuild the plugin against this SDK",
        entry_size, BP_ABI_MAJOR, kRequiredKernelEntrySize, alignof(bp_kernel)));
  }
}

}  // namespace

bp_plugin accept_descriptor(const bp_plugin* plugin) {
  if (plugin == nullptr) {
    throw PluginRejected(fmt::format(
        "its {} returned no descriptor (NULL): it refused this core (ABI {}.{}) or could not "
        "start; its own output may say why",
        BP_PLUGIN_ENTRY_SYMBOL, BP_ABI_MAJOR, BP_ABI_MINOR));
  }
  if (plugin->struct_size < kRequiredDescriptorSize) {
    throw PluginRejected(fmt::format(
        "its descriptor is {} bytes, smaller than the {} bytes every ABI {}.x plugin fills: "
        "it is corrupt or was not made by backplane_add_plugin; rebuild the plugin against "
        "this SDK",
        plugin->struct_size, kRequiredDescriptorSize, BP_ABI_MAJOR));
  }
  if (plugin->abi_major != BP_ABI_MAJOR) {
    throw PluginRejected(fmt::format(
        "it was built for ABI {}.x, this core speaks {}.x: rebuild the plugin against this SDK",
        plugin->abi_major, BP_ABI_MAJOR));
  }
  // A descriptor shorter than its own version's would have the core treat fields the plugin
  // believes it set (its kernels, its events) as absent, and load it without them.
  const size_t claimed_size = descriptor_size_of_minor(plugin->abi_minor);
  if (plugin->struct_size < claimed_size || plugin->struct_size % alignof(bp_plugin) != 0) {
    throw PluginRejected(fmt::format(
        "its descriptor is {} bytes, but it claims ABI {}.{}, whose descriptor is {} bytes (a "
        "multiple of {}): it is corrupt or was not made by backplane_add_plugin; rebuild the "
        "plugin against this SDK",
        plugin->struct_size, plugin->abi_major, plugin->abi_minor, claimed_size,
        alignof(bp_plugin)));
  }

  // Fields past the plugin's struct_size stay zero. None is cut in two: struct_size is a
  // multiple of alignof(bp_plugin), which no field of the descriptor straddles.
  bp_plugin readable{};
  std::memcpy(&readable, plugin, std::min(plugin->struct_size, sizeof(bp_plugin)));

  if (readable.name == nullptr || !is_backend_name(readable.name)) {
    throw PluginRejected(fmt::format(
        "its backend name {} is not valid: a backend name is lower-case letters, digits and "
        "'_', as bp-codegen derives it from the backend YAML",
        readable.name ? fmt::format("'{}'", readable.name) : std::string("(NULL)")));
  }
  const std::pair<const char*, bool> required[] = {
      {"last_error", readable.last_error != nullptr},
      {"device_count", readable.device_count != nullptr},
      {"device_properties", readable.device_properties != nullptr},
  };
  for (const auto& [function, present] : required) {
    if (!present) {
      throw PluginRejected(fmt::format(
          "its descriptor has no {} function, which every plugin must provide", function));
    }
  }
  check_memory_functions(readable);
  check_event_functions(readable);
  check_kernel_table(readable);
  check_collectives(readable);
  if (readable.dlpack_device_type < 0) {
    throw PluginRejected(fmt::format(
        "its dlpack_device_type is {}, which no DLPack device type is: set the DLDeviceType of "
        "dlpack.h that says what its device pointers are (kDLCUDA, kDLOpenCL, kDLCPU for host "
        "addresses, kDLExtDev for others), or 0 to leave it to the core",
        readable.dlpack_device_type));
  }
  return readable;
}

}  // namespace bp::detail
