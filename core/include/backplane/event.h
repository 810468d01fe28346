// Waiting for a device's queued work, and marking and timing points in it. A backend may return
// from an op before its device has finished it (CUDA and OpenCL do); reading a tensor back to
// the host always waits, so these are for code that times work or hands data to other APIs.
#pragma once

#include <backplane/device.h>

namespace bp {

// Waits until every op and copy queued on `device` so far has finished, and reports the first
// failure among them as a bp::Error.
void synchronize(Device device);

// A point in one device's queue of work, as CUDA events are. Backends with events of their own
// (ABI 1.2) mark it without waiting; on the others record() waits for the device and reads the
// host's clock, so the times still cover the work before each mark.
class Event {
 public:
  // An event of `device`, not yet recorded.
  explicit Event(Device device = default_device());
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  Device device() const { return device_; }
  bool recorded() const { return recorded_; }

  // Marks the point after everything queued on the device so far; recording again moves it.
  void record();
  // True once the work before the mark has finished (also when never recorded). Never waits.
  bool query() const;
  // Waits until the work before the mark has finished; a failure of it is a bp::Error.
  void synchronize() const;
  // Milliseconds from this event's mark to `end`'s, waiting for both first. Both must have
  // been recorded, on one device; otherwise a bp::Error says which rule was broken. Every
  // method but device() and recorded() refuses an event that was moved from.
  double elapsed_ms(const Event& end) const;

 private:
  void release() noexcept;
  // A moved-from event has no handle, like one of a backend without events: this tells them
  // apart, so that it is refused rather than timed with the host's clock.
  void check_usable(const char* method) const;

  Device device_;
  void* handle_ = nullptr;  // the backend's event; null where the backend has none
  bool recorded_ = false;
  bool moved_from_ = false;
  long long host_time_ns_ = 0;  // when recorded, where the backend has no events
};

}  // namespace bp
