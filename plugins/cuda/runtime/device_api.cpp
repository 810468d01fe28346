// The descriptor's device, memory, copy, event and counter functions. Device pointers are CUDA
// device addresses from each device's caching allocator; copies and kernels of one device go
// through its one stream, in order. Copies from the host return once the source has been read
// (staged in pinned memory); copies to the host return once the destination holds the data. An
// event is a cudaEvent_t recorded on the device's stream.
#include "CUDANativeFunctions.h"

#include "kernels/cuda_call.h"
#include "runtime/device_guard.h"
#include "runtime/runtime.h"
#if BACKPLANE_CUDA_NCCL
#include "runtime/nccl_collectives.h"
#endif

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bp::cuda {
namespace {

char* at(void* ptr, uint64_t offset) { return static_cast<char*>(ptr) + offset; }
const char* at(const void* ptr, uint64_t offset) { return static_cast<const char*>(ptr) + offset; }

bp_status device_count(int32_t* count) {
  return plugin::guard([&] { Runtime::get().devices().report_count(count); });
}

bp_status device_properties(int32_t index, bp_device_properties* props) {
  return plugin::guard([&] { Runtime::get().devices().report_properties(index, props); });
}

bp_status allocate(int32_t index, uint64_t bytes, void** ptr) {
  return plugin::guard([&] { *ptr = Runtime::get().device(index).allocator().allocate(bytes); });
}

bp_status deallocate(int32_t index, void* ptr) {
  return plugin::guard([&] { Runtime::get().device(index).allocator().release(ptr); });
}

bp_status copy_host_to_device(int32_t index, void* dst, uint64_t dst_offset, const void* src,
                              uint64_t bytes) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    if (bytes == 0) return;
    device.staging().to_device(device.stream(), at(dst, dst_offset), src, bytes);
  });
}

bp_status copy_device_to_host(int32_t index, void* dst, const void* src, uint64_t src_offset,
                              uint64_t bytes) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    if (bytes == 0) return;
    device.staging().to_host(device.stream(), dst, at(src, src_offset), bytes);
  });
}

// The core calls this to move a tensor between two CUDA devices (the source on another device
// than `index`), or within one. Another device's queued work may still be writing the source, so
// it is waited for first, and its later work waits for the copy. Within one device, cudaMemcpy
// leaves overlapping ranges undefined; those go through a scratch block, as memmove does.
bp_status copy_device_to_device(int32_t index, void* dst, uint64_t dst_offset, const void* src,
                                uint64_t src_offset, uint64_t bytes) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    char* to = at(dst, dst_offset);
    const char* from = at(src, src_offset);
    if (bytes == 0 || to == from) return;
    const DeviceGuard guard(index);
    const std::string action = device.label() + ": copying " + std::to_string(bytes) + " bytes";
    cudaPointerAttributes source{};
    check_cuda(cudaPointerGetAttributes(&source, from), action + " (finding the source's device)");
    if (source.type == cudaMemoryTypeDevice && source.device != index) {
      Device& source_device = Runtime::get().device(source.device);
      source_device.synchronize();
      check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, device.stream()),
                 action + " between devices");
      // The source device's later work (a write to the source, or its block handed out again by
      // that device's allocator) must wait for the copy, which its stream does not order.
      cudaEvent_t copied = nullptr;
      check_cuda(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming),
                 action + " (creating an event)");
      const cudaError_t recorded = cudaEventRecord(copied, device.stream());
      const cudaError_t waited = recorded == cudaSuccess
                                     ? cudaStreamWaitEvent(source_device.stream(), copied, 0)
                                     : recorded;
      cudaEventDestroy(copied);  // released once the wait is over
      check_cuda(waited, action + " (ordering the source device's later work after the copy)");
      return;
    }
    const auto to_address = reinterpret_cast<uintptr_t>(to),
               from_address = reinterpret_cast<uintptr_t>(from);
    const bool overlap = to_address < from_address + bytes && from_address < to_address + bytes;
    if (!overlap) {
      check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, device.stream()),
                 action);
      return;
    }
    DeviceAllocator& allocator = device.allocator();
    void* scratch = allocator.allocate(bytes);
    const cudaError_t first =
        cudaMemcpyAsync(scratch, from, bytes, cudaMemcpyDeviceToDevice, device.stream());
    const cudaError_t second =
        first == cudaSuccess
            ? cudaMemcpyAsync(to, scratch, bytes, cudaMemcpyDeviceToDevice, device.stream())
            : first;
    allocator.release(scratch);  // reused only by work queued after these copies
    check_cuda(second, action);
  });
}

bp_status synchronize(int32_t index) {
  return plugin::guard([&] { Runtime::get().device(index).synchronize(); });
}

cudaEvent_t as_cuda_event(bp_event event) { return reinterpret_cast<cudaEvent_t>(event); }

bp_status event_create(int32_t index, bp_event* event) {
  return plugin::guard([&] {
    const Device& device = Runtime::get().device(index);
    const DeviceGuard guard(index);
    cudaEvent_t created = nullptr;
    check_cuda(cudaEventCreate(&created), device.label() + ": creating an event");
    *event = reinterpret_cast<bp_event>(created);
  });
}

// cudaEventDestroy on an event whose work is still queued is allowed: CUDA frees it afterwards.
bp_status event_destroy(int32_t index, bp_event event) {
  return plugin::guard([&] {
    const Device& device = Runtime::get().device(index);
    check_cuda(cudaEventDestroy(as_cuda_event(event)), device.label() + ": destroying an event");
  });
}

bp_status event_record(int32_t index, bp_event event) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    check_cuda(cudaEventRecord(as_cuda_event(event), device.stream()),
               device.label() + ": recording an event");
  });
}

bp_status event_query(int32_t index, bp_event event, uint8_t* complete) {
  return plugin::guard([&] {
    const Device& device = Runtime::get().device(index);
    const cudaError_t state = cudaEventQuery(as_cuda_event(event));
    *complete = state == cudaSuccess ? 1 : 0;
    if (state == cudaErrorNotReady) {
      // Not a failure, but the runtime keeps it as the thread's last error, which the next
      // kernel launch's check would report.
      (void)cudaGetLastError();
      return;
    }
    check_cuda(state, device.label() + ": querying an event");
  });
}

bp_status event_synchronize(int32_t index, bp_event event) {
  return plugin::guard([&] {
    const Device& device = Runtime::get().device(index);
    check_cuda(cudaEventSynchronize(as_cuda_event(event)),
               device.label() + ": waiting for an event");
  });
}

bp_status event_elapsed(int32_t index, bp_event start, bp_event end, double* milliseconds) {
  return plugin::guard([&] {
    const Device& device = Runtime::get().device(index);
    float elapsed = 0;
    check_cuda(cudaEventElapsedTime(&elapsed, as_cuda_event(start), as_cuda_event(end)),
               device.label() + ": timing two events");
    *milliseconds = elapsed;
  });
}

// Every device's allocator statistics (Device::counters), device by device.
bp_status read_counters(bp_counter* counters, int64_t capacity, int64_t* count) {
  bp_status status = BP_STATUS_OK;
  const bp_status guarded = plugin::guard([&] {
    Runtime& runtime = Runtime::get();
    std::vector<plugin::CounterValue> values;
    for (int index = 0; index < runtime.devices().count(); ++index) {
      const auto device_values = runtime.device(index).counters();
      values.insert(values.end(), device_values.begin(), device_values.end());
    }
    status = plugin::write_counters(values, counters, capacity, count);
  });
  return guarded != BP_STATUS_OK ? guarded : status;
}

void shutdown() { Runtime::get().shut_down(); }

}  // namespace

void configure_plugin(bp_plugin& plugin) {
  plugin.shutdown = &shutdown;
  plugin.device_count = &device_count;
  plugin.device_properties = &device_properties;
  plugin.allocate = &allocate;
  plugin.deallocate = &deallocate;
  plugin.copy_host_to_device = &copy_host_to_device;
  plugin.copy_device_to_host = &copy_device_to_host;
  plugin.copy_device_to_device = &copy_device_to_device;
  plugin.synchronize = &synchronize;
  plugin.read_counters = &read_counters;
  plugin.event_create = &event_create;
  plugin.event_destroy = &event_destroy;
  plugin.event_record = &event_record;
  plugin.event_query = &event_query;
  plugin.event_synchronize = &event_synchronize;
  plugin.event_elapsed = &event_elapsed;
  plugin.dlpack_device_type = kDLCUDA;
#if BACKPLANE_CUDA_NCCL
  plugin.collectives = nccl_collectives();
#endif
}

}  // namespace bp::cuda
