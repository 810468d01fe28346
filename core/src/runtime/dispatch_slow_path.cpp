// The dispatcher's slow path (declared in dispatch/dispatch.h): the loader's answers when the
// table holds no kernel for an op, or when a kernel fails.
#include "dispatch/dispatch.h"

#include "runtime/environment.h"
#include "runtime/plugin_status.h"
#include "runtime/registry.h"

#include <backplane/error.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace bp::detail {
namespace {

std::string_view op_name(OpId op) { return kOpNames[static_cast<size_t>(op)]; }

std::string missing_host_plugin_message(OpId op) {
  const char* backends = secure_getenv("BACKPLANE_BACKENDS");
  const std::string reason =
      backends ? fmt::format(
                     "BACKPLANE_BACKENDS is {}, which may exclude it: it loads the cpu "
                     "plugin only when the list names cpu or '*' without '!cpu'",
                     quote_for_message(backends))
               : std::string(
                     "It was not found or failed to load; the folders in "
                     "BACKPLANE_PLUGIN_PATH and the default plugin folder are searched");
  return fmt::format(
      "{} has no kernel for device cpu: the cpu plugin is not loaded. {}. "
      "`bp-info` shows which plugins loaded and why others did not.",
      op_name(op), reason);
}

// Whether BACKPLANE_FALLBACK=cpu can run `op` for `device`: another device than the host, an
// op the host has, and not copy_, which is how the fallback moves tensors.
bool host_can_run(OpId op, Device device) {
  return !device.is_cpu() && op != OpId::copy_ && has_kernel(op, Device::cpu());
}

std::string missing_kernel_message(OpId op, Device device, const Backend& backend,
                                   bool host_can_run_it) {
  const PluginInfo& plugin = backend.info();
  const auto refused = std::find_if(plugin.refused_kernels.begin(), plugin.refused_kernels.end(),
                                    [&](const RefusedKernel& k) { return k.op == op_name(op); });
  const std::string why =
      refused != plugin.refused_kernels.end()
          ? fmt::format("the {} plugin ({}) has a kernel for it, but it was refused: {}",
                        plugin.name, plugin.path, refused->reason)
          : fmt::format("the {} plugin ({}) does not implement it", plugin.name, plugin.path);
  return fmt::format(
      "{} has no kernel for device {}: {}. Move the tensors to a device that does "
      "(x.to(\"cpu\")), {}; `bp-info` lists each backend's ops.",
      op_name(op), device.str(), why,
      host_can_run_it ? "use a plugin that implements it, or set BACKPLANE_FALLBACK=cpu to run "
                        "such ops on the CPU"
                      : "or use a plugin that implements it");
}

// For an op started on another thread, or by a static destructor, while the process exits.
std::string shut_down_message(OpId op, Device device, const Backend& backend) {
  return fmt::format(
      "{} cannot run on {}: backend '{}' has shut down because the process is exiting. Let "
      "ops finish before it exits: join the threads that run them before main returns or exit "
      "is called",
      op_name(op), device.str(), backend.info().name);
}

}  // namespace

bp_kernel_fn kernel_lookup_slow(OpId op, Device device) {
  check_device_type(device.type());
  const Registry& registry = Registry::get();  // loads the plugins on first use
  if (const bp_kernel_fn fn = kernel_in_table(op, device)) return fn;

  const Backend* backend = registry.backend(device.type());
  if (!backend) {
    if (device.is_cpu()) throw Error(ErrorCode::NotImplemented, missing_host_plugin_message(op));
    throw Error(ErrorCode::Internal, fmt::format("{}: no backend is loaded for device type {}",
                                                 op_name(op), device.type()));
  }
  if (backend->has_shut_down()) {
    throw Error(ErrorCode::Backend, shut_down_message(op, device, *backend));
  }
  const bool host_can_run_it = host_can_run(op, device);
  if (host_can_run_it && registry.fallback_policy() == FallbackPolicy::Cpu) return nullptr;
  throw Error(ErrorCode::NotImplemented,
              missing_kernel_message(op, device, *backend, host_can_run_it));
}

void throw_kernel_failure(bp_status status, OpId op, Device device) {
  const Backend* backend = Registry::get().backend(device.type());
  std::string message = backend ? backend->last_error() : std::string();
  if (message.empty()) {
    message = fmt::format("the plugin gave no message (status {})", static_cast<int>(status));
  }
  throw Error(error_code_for(status),
              fmt::format("{} failed on {} (plugin {}): {}", op_name(op), device.str(),
                          backend ? backend->info().name : std::string("?"), message));
}

}  // namespace bp::detail
