// bp::synchronize and bp::Event: the plugin's own events where it has them (ABI 1.2), the
// host's clock after a synchronize where it has none, and the rules for timing two events.
#include "core_test_support.h"

#include <backplane/event.h>

#include <chrono>
#include <thread>
#include <utility>

using namespace bp;
using coretest::backend_counter;
using coretest::check_invalid_argument;
using coretest::fixture_device;
using coretest::fixture_device_memory_device;

TEST_CASE("an event of a backend without events times on the host's clock") {
  for (const Device device : {Device::cpu(), fixture_device()}) {
    INFO("device " << device.str());
    Event start(device), end(device);
    CHECK(start.device() == device);
    CHECK_FALSE(start.recorded());
    CHECK(start.query());  // never recorded: nothing to wait for
    start.record();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    end.record();
    CHECK(end.recorded());
    CHECK(end.query());
    end.synchronize();
    const double milliseconds = start.elapsed_ms(end);
    CHECK(milliseconds >= 19.0);
    CHECK(end.elapsed_ms(start) == doctest::Approx(-milliseconds));
  }
}

TEST_CASE("an event of a backend with events is the plugin's, from creation to destruction") {
  const Device device = fixture_device_memory_device();
  const uint64_t live_before = backend_counter("fixture_device_memory", "fixture.events.live");
  {
    Event start(device), end(device);
    CHECK(backend_counter("fixture_device_memory", "fixture.events.live") == live_before + 2);
    const uint64_t recorded_before =
        backend_counter("fixture_device_memory", "fixture.events.recorded");
    start.record();
    end.record();
    end.record();
    CHECK(backend_counter("fixture_device_memory", "fixture.events.recorded") ==
          recorded_before + 3);
    CHECK(start.query());
    start.synchronize();
    // The fixture's clock advances 1 ms a record: the plugin's time, not the host's.
    CHECK(start.elapsed_ms(end) == 2.0);

    Event moved = std::move(start);
    CHECK(moved.recorded());
    CHECK_FALSE(start.recorded());  // NOLINT(bugprone-use-after-move): moved-from is empty
    CHECK(moved.elapsed_ms(end) == 2.0);
    CHECK(backend_counter("fixture_device_memory", "fixture.events.live") == live_before + 2);
  }
  CHECK(backend_counter("fixture_device_memory", "fixture.events.live") == live_before);
}

TEST_CASE("timing needs two recorded events of one device") {
  Event start(Device::cpu()), end(Device::cpu());
  check_invalid_argument([&] { start.elapsed_ms(end); },
                         {"the start event was never recorded", "call record() on both events"});
  start.record();
  check_invalid_argument([&] { start.elapsed_ms(end); }, {"the end event was never recorded"});

  Event elsewhere(fixture_device_memory_device());
  elsewhere.record();
  check_invalid_argument(
      [&] { start.elapsed_ms(elsewhere); },
      {"the start event is on cpu and the end event on fixture_device_memory:0", "one device"});
}

TEST_CASE("synchronize waits for a device and accepts every loaded one") {
  synchronize(Device::cpu());
  synchronize(fixture_device());
  const Tensor on_device = ones({4}).to(fixture_device_memory_device());
  synchronize(on_device.device());
  CHECK(on_device.cpu().to_vector<float>() == std::vector<float>{1, 1, 1, 1});
  check_invalid_argument([] { synchronize(Device(fixture_device().type(), 3)); },
                         {"synchronize: device fixture:3 does not exist: fixture has 1 device(s)"});
  check_invalid_argument([] { synchronize(Device(0, 5)); },
                         {"synchronize: device cpu:5 does not exist: cpu has 1 device(s)"});
  check_invalid_argument([] { synchronize(Device(15, 0)); },
                         {"synchronize: no backend is loaded for device type 15"});
  check_invalid_argument([] { Event event(Device(15, 0)); },
                         {"Event: no backend is loaded for device type 15"});
}

TEST_CASE("an event that was moved from is refused, on backends with and without events") {
  for (const Device device : {Device::cpu(), fixture_device_memory_device()}) {
    CAPTURE(device.str());
    Event first(device);
    Event second = std::move(first);
    check_invalid_argument([&] { first.record(); },
                           {"Event::record: this bp::Event was moved from"});
    second.record();
    Event third(device);
    third = std::move(second);
    third.record();
    check_invalid_argument([&] { second.query(); }, {"Event::query", "moved from"});
    check_invalid_argument([&] { second.synchronize(); }, {"Event::synchronize", "moved from"});
    check_invalid_argument([&] { third.elapsed_ms(second); }, {"Event::elapsed_ms", "moved from"});
    CHECK(third.elapsed_ms(third) == 0.0);
  }
}
