// The descriptor's device, memory and event functions: devices are those the runtime found,
// memory is OpenCL buffers (a device pointer is a cl_mem), copies go through each device's
// in-order queue, blocking where the host's memory is involved, and an event is the marker its
// latest record enqueued.
#include "OpenCLNativeFunctions.h"

#include "runtime/cl_call.h"
#include "runtime/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace bp::opencl {
namespace {

cl_mem as_buffer(const void* ptr) { return static_cast<cl_mem>(const_cast<void*>(ptr)); }

// Copies within one buffer whose byte ranges overlap: OpenCL refuses those
// (CL_MEM_COPY_OVERLAP), so they go through a scratch buffer, as memmove would.
void copy_within(Device& device, cl_mem dst, uint64_t dst_offset, cl_mem src, uint64_t src_offset,
                 uint64_t bytes) {
  const bool overlap =
      dst == src && dst_offset < src_offset + bytes && src_offset < dst_offset + bytes;
  if (!overlap) {
    check_cl(clEnqueueCopyBuffer(device.queue(), src, dst, src_offset, dst_offset, bytes, 0,
                                 nullptr, nullptr),
             "copying " + std::to_string(bytes) + " bytes on " + device.label());
    return;
  }
  if (dst_offset == src_offset) return;
  cl_int error = CL_SUCCESS;
  const OwnedBuffer scratch(
      clCreateBuffer(device.context(), CL_MEM_READ_WRITE, bytes, nullptr, &error));
  check_cl(error, "allocating a scratch buffer of " + std::to_string(bytes) + " bytes on " +
                      device.label());
  copy_within(device, scratch.get(), 0, src, src_offset, bytes);
  copy_within(device, dst, dst_offset, scratch.get(), 0, bytes);
  // Releasing the scratch buffer now is safe: OpenCL keeps it until the copies are done.
}

bp_status device_count(int32_t* count) {
  return plugin::guard([&] { Runtime::get().devices().report_count(count); });
}

bp_status device_properties(int32_t index, bp_device_properties* props) {
  return plugin::guard([&] { Runtime::get().devices().report_properties(index, props); });
}

bp_status allocate(int32_t index, uint64_t bytes, void** ptr) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    if (bytes > device.max_allocation()) {
      throw plugin::Error(BP_STATUS_OUT_OF_MEMORY, device.label() + " cannot hold " +
                                                       std::to_string(bytes) +
                                                       " bytes in one buffer: its largest is " +
                                                       std::to_string(device.max_allocation()) +
                                                       " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    }
    cl_int error = CL_SUCCESS;
    // OpenCL has no empty buffers.
    cl_mem buffer = clCreateBuffer(device.context(), CL_MEM_READ_WRITE, bytes == 0 ? 1 : bytes,
                                   nullptr, &error);
    check_cl(error, "allocating " + std::to_string(bytes) + " bytes on " + device.label());
    *ptr = buffer;
  });
}

bp_status deallocate(int32_t index, void* ptr) {
  return plugin::guard([&] {
    Runtime::get().device(index);  // checks the index
    check_cl(clReleaseMemObject(as_buffer(ptr)), "releasing a buffer");
  });
}

bp_status copy_host_to_device(int32_t index, void* dst, uint64_t dst_offset, const void* src,
                              uint64_t bytes) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    if (bytes == 0) return;
    check_cl(clEnqueueWriteBuffer(device.queue(), as_buffer(dst), CL_TRUE, dst_offset, bytes, src,
                                  0, nullptr, nullptr),
             "copying " + std::to_string(bytes) + " bytes to " + device.label());
  });
}

bp_status copy_device_to_host(int32_t index, void* dst, const void* src, uint64_t src_offset,
                              uint64_t bytes) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    if (bytes == 0) return;
    check_cl(clEnqueueReadBuffer(device.queue(), as_buffer(src), CL_TRUE, src_offset, bytes, dst, 0,
                                 nullptr, nullptr),
             "copying " + std::to_string(bytes) + " bytes from " + device.label());
  });
}

bp_status copy_device_to_device(int32_t index, void* dst, uint64_t dst_offset, const void* src,
                                uint64_t src_offset, uint64_t bytes) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    if (bytes == 0) return;
    copy_within(device, as_buffer(dst), dst_offset, as_buffer(src), src_offset, bytes);
  });
}

bp_status synchronize(int32_t index) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    check_cl(clFinish(device.queue()), "waiting for " + device.label());
  });
}

// A bp_event: the marker of its latest record (none before the first), whose completion and
// profiled end time are the event's.
struct Marker {
  OwnedEvent recorded;
};

Marker& as_marker(bp_event event) { return *reinterpret_cast<Marker*>(event); }

bp_status event_create(int32_t index, bp_event* event) {
  return plugin::guard([&] {
    Runtime::get().device(index);  // checks the index
    *event = reinterpret_cast<bp_event>(new Marker);
  });
}

// Releasing a marker that is still queued is allowed: OpenCL keeps it until it completes.
bp_status event_destroy(int32_t index, bp_event event) {
  return plugin::guard([&] {
    Runtime::get().device(index);
    delete &as_marker(event);
  });
}

bp_status event_record(int32_t index, bp_event event) {
  return plugin::guard([&] {
    Device& device = Runtime::get().device(index);
    cl_event marker = nullptr;
    check_cl(clEnqueueMarkerWithWaitList(device.queue(), 0, nullptr, &marker),
             "recording an event on " + device.label());
    as_marker(event).recorded = OwnedEvent(marker);
    // Submitted now, the marker completes with the work before it even if nothing waits.
    check_cl(clFlush(device.queue()), "submitting an event on " + device.label());
  });
}

bp_status event_query(int32_t index, bp_event event, uint8_t* complete) {
  return plugin::guard([&] {
    const Device& device = Runtime::get().device(index);
    const cl_event marker = as_marker(event).recorded.get();
    cl_int status = CL_COMPLETE;
    if (marker != nullptr) {
      check_cl(clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                              nullptr),
               "querying an event on " + device.label());
    }
    if (status < 0) {
      throw plugin::Error(BP_STATUS_DEVICE_ERROR,
                          device.label() +
                              ": the work before the event failed: " + cl_error_text(status));
    }
    *complete = status == CL_COMPLETE ? 1 : 0;
  });
}

bp_status event_synchronize(int32_t index, bp_event event) {
  return plugin::guard([&] {
    const Device& device = Runtime::get().device(index);
    const cl_event marker = as_marker(event).recorded.get();
    if (marker == nullptr) return;
    check_cl(clWaitForEvents(1, &marker), "waiting for an event on " + device.label());
  });
}

bp_status event_elapsed(int32_t index, bp_event start, bp_event end, double* milliseconds) {
  return plugin::guard([&] {
    const Device& device = Runtime::get().device(index);
    const auto end_time = [&](bp_event event) {
      cl_ulong nanoseconds = 0;
      check_cl(clGetEventProfilingInfo(as_marker(event).recorded.get(), CL_PROFILING_COMMAND_END,
                                       sizeof nanoseconds, &nanoseconds, nullptr),
               "reading an event's time on " + device.label());
      return static_cast<int64_t>(nanoseconds);
    };
    *milliseconds = static_cast<double>(end_time(end) - end_time(start)) * 1e-6;
  });
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
  plugin.event_create = &event_create;
  plugin.event_destroy = &event_destroy;
  plugin.event_record = &event_record;
  plugin.event_query = &event_query;
  plugin.event_synchronize = &event_synchronize;
  plugin.event_elapsed = &event_elapsed;
  plugin.dlpack_device_type = kDLOpenCL;
}

}  // namespace bp::opencl
