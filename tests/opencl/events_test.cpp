// Events on OpenCL devices: markers in the device's in-order queue, which complete after the
// kernels queued before them and carry the device's profiled time.
#include "opencl_devices.h"

#include <backplane/event.h>

TEST_CASE("events mark kernels queued on an OpenCL device, complete after them, and time them") {
  FOR_EACH_OPENCL_DEVICE(device) {
    INFO(device.str());
    const bp::Tensor a = bp::randn({256, 256}, bp::kFloat32, device);
    bp::synchronize(device);

    bp::Event start(device), end(device);
    CHECK(start.query());  // never recorded
    start.record();
    bp::Tensor product;
    for (int i = 0; i < 8; ++i) product = bp::mm(a, a);
    end.record();
    end.synchronize();
    CHECK(end.query());
    const double milliseconds = start.elapsed_ms(end);
    CHECK(milliseconds > 0.0);
    CHECK(end.elapsed_ms(start) == doctest::Approx(-milliseconds));

    // The product is there to read once the event completed, and agrees with the host's.
    const bp::Tensor expected = bp::mm(a.cpu(), a.cpu());
    const std::vector<float> got = product.cpu().to_vector<float>();
    const std::vector<float> want = expected.to_vector<float>();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); i += 997)
      CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
  }
}

TEST_CASE("an OpenCL event can be destroyed before the work it marks has finished") {
  FOR_EACH_OPENCL_DEVICE(device) {
    const bp::Tensor a = bp::randn({256, 256}, bp::kFloat32, device);
    {
      bp::Event early(device);
      bp::mm(a, a);
      early.record();
    }  // released while the product may still run
    bp::synchronize(device);
  }
}
