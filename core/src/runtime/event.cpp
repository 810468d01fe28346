// bp::synchronize and bp::Event over the device's backend: its own events where the plugin has
// them (ABI 1.2), else synchronize and the host's steady clock.
#include <backplane/event.h>

#include "runtime/registry.h"

#include <backplane/error.h>

#include <fmt/format.h>

#include <chrono>
#include <utility>

namespace bp {
namespace {

// nullptr for the host when no cpu plugin is loaded: host work is then done when it returns.
const detail::Backend* backend_of(Device device) {
  return detail::Registry::get().backend(device.type());
}

bp_event as_event(void* handle) { return static_cast<bp_event>(handle); }

long long host_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void synchronize(Device device) {
  if (const detail::Backend* backend = detail::backend_of_existing_device(device, "synchronize")) {
    backend->synchronize(device.index());
  }
}

Event::Event(Device device) : device_(device) {
  const detail::Backend* backend = detail::backend_of_existing_device(device, "Event");
  if (backend != nullptr && backend->has_events()) handle_ = backend->create_event(device.index());
}

Event::~Event() { release(); }

Event::Event(Event&& other) noexcept
    : device_(other.device_),
      handle_(std::exchange(other.handle_, nullptr)),
      recorded_(std::exchange(other.recorded_, false)),
      moved_from_(std::exchange(other.moved_from_, true)),
      host_time_ns_(other.host_time_ns_) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    handle_ = std::exchange(other.handle_, nullptr);
    recorded_ = std::exchange(other.recorded_, false);
    moved_from_ = std::exchange(other.moved_from_, true);
    host_time_ns_ = other.host_time_ns_;
  }
  return *this;
}

void Event::release() noexcept {
  if (handle_ == nullptr) return;
  backend_of(device_)->destroy_event(device_.index(), as_event(handle_));
  handle_ = nullptr;
}

void Event::check_usable(const char* method) const {
  if (!moved_from_) return;
  throw Error(ErrorCode::InvalidArgument,
              fmt::format("Event::{}: this bp::Event was moved from and marks nothing; use the "
                          "event it was moved to, or make a new one",
                          method));
}

void Event::record() {
  check_usable("record");
  const detail::Backend* backend = backend_of(device_);
  if (handle_ != nullptr) {
    backend->record_event(device_.index(), as_event(handle_));
  } else {
    if (backend != nullptr) backend->synchronize(device_.index());
    host_time_ns_ = host_clock_ns();
  }
  recorded_ = true;
}

bool Event::query() const {
  check_usable("query");
  if (handle_ == nullptr) return true;  // recording waited
  return backend_of(device_)->event_complete(device_.index(), as_event(handle_));
}

void Event::synchronize() const {
  check_usable("synchronize");
  if (handle_ == nullptr) return;
  backend_of(device_)->synchronize_event(device_.index(), as_event(handle_));
}

double Event::elapsed_ms(const Event& end) const {
  check_usable("elapsed_ms");
  end.check_usable("elapsed_ms");
  if (!recorded_ || !end.recorded_) {
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("Event::elapsed_ms: the {} event was never recorded; call record() on "
                            "both events, start first, before asking for the time between them",
                            recorded_ ? "end" : "start"));
  }
  if (device_ != end.device_) {
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("Event::elapsed_ms: the start event is on {} and the end event on {}; "
                            "time only events of one device, whose clocks agree",
                            device_.str(), end.device_.str()));
  }
  if (handle_ == nullptr) return static_cast<double>(end.host_time_ns_ - host_time_ns_) * 1e-6;
  synchronize();
  end.synchronize();
  return backend_of(device_)->event_elapsed_ms(device_.index(), as_event(handle_),
                                               as_event(end.handle_));
}

}  // namespace bp
