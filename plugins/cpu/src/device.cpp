// The CPU backend's one device: the host. Its memory is ordinary host memory that the core
// allocates itself, so the descriptor's memory functions stay NULL.
#include "CPUNativeFunctions.h"

#include "counters.h"
#include "onednn/primitive_cache.h"
#include "thread_pool.h"

#include <backplane/sdk/plugin.hpp>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

namespace bp::cpu {
namespace {

// "AMD EPYC 7B13" from /proc/cpuinfo's first "model name" line; empty where there is none
// (other architectures, no /proc).
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t begin = line.find_first_not_of(" \t", colon + 1);
    return begin == std::string::npos ? std::string() : line.substr(begin);
  }
  return {};
}

struct HostDescription {
  std::string name;
  std::string description;
  uint64_t total_memory = 0;
};

// Read once; the strings must outlive every device_properties call.
const HostDescription& host() {
  static const HostDescription description = [] {
    HostDescription d;
    const unsigned threads = std::thread::hardware_concurrency();
    const std::string model = cpu_model();
    d.name = (model.empty() ? std::string("host CPU") : model) + " (" +
             (threads ? std::to_string(threads) : std::string("unknown number of")) + " threads)";
    const int workers = configured_thread_count();
    d.description = "host memory, allocated by the core; large kernels run on " +
                    std::to_string(workers) + (workers == 1 ? " thread" : " threads") +
                    " (BACKPLANE_NUM_THREADS)";
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0) {
      d.total_memory = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
    }
    return d;
  }();
  return description;
}

// Reads the plugin's variables as it loads, so that a bad value is among the warnings the core
// has once loading is done (bp-info shows them), rather than reported by the first op using it.
bp_status read_environment() {
  return plugin::guard([] {
    configured_thread_count();
    onednn::primitive_cache();
  });
}

bp_status device_count(int32_t* count) {
  *count = 1;
  return BP_STATUS_OK;
}

bp_status device_properties(int32_t device, bp_device_properties* props) {
  return plugin::guard([&] {
    plugin::check(device == 0,
                  "the cpu backend has one device, 0; got device " + std::to_string(device));
    const HostDescription& h = host();
    plugin::write_device_properties(props, h.name.c_str(), h.description.c_str(), h.total_memory);
  });
}

}  // namespace

void configure_plugin(bp_plugin& plugin) {
  plugin.init = read_environment;
  // The thread pool starts on first use; shutdown joins it before the process exits.
  plugin.shutdown = shut_down_thread_pool;
  plugin.device_count = device_count;
  plugin.device_properties = device_properties;
  plugin.read_counters = read_counters;
  // Host memory belongs to the core: no allocate, deallocate or copies; and kernels run
  // synchronously, so there is nothing to synchronize.
  plugin.allocate = nullptr;
  plugin.deallocate = nullptr;
  plugin.copy_host_to_device = nullptr;
  plugin.copy_device_to_host = nullptr;
  plugin.copy_device_to_device = nullptr;
  plugin.synchronize = nullptr;
  plugin.dlpack_device_type = kDLCPU;
}

}  // namespace bp::cpu
