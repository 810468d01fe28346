// Events and synchronize through the core on a GPU: an op returns before the GPU has finished
// it, an event recorded behind it completes once it has, and the time between two events is
// the GPU's time for the work between them.
#include "cuda_test_support.h"

#include <backplane/event.h>

#include <vector>

TEST_CASE("events mark work queued on a GPU, complete after it, and time it") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const bp::Device gpu = cudatest::cuda_devices().front();
  const bp::Tensor a = bp::randn({4096, 4096}, bp::kFloat32, gpu);
  bp::synchronize(gpu);

  bp::Event start(gpu), end(gpu);
  CHECK(start.query());  // never recorded
  start.record();
  bp::Tensor product;
  for (int i = 0; i < 8; ++i) product = bp::mm(a, a);  // about 1 TFLOP, far longer than a call
  end.record();
  end.synchronize();
  CHECK(end.query());
  CHECK(start.query());
  const double milliseconds = start.elapsed_ms(end);
  CHECK(milliseconds > 0.0);
  CHECK(end.elapsed_ms(start) == doctest::Approx(-milliseconds));

  // Recording again moves the mark: nothing queued between the two records takes no time.
  start.record();
  end.record();
  CHECK(start.elapsed_ms(end) < milliseconds);
  bp::synchronize(gpu);
}

TEST_CASE("an event survives the work it was recorded behind, and moves with its owner") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const bp::Device gpu = cudatest::cuda_devices().front();
  const bp::Tensor a = bp::randn({2048, 2048}, bp::kFloat32, gpu);
  std::vector<bp::Event> events;
  for (int i = 0; i < 4; ++i) {
    bp::mm(a, a);
    events.emplace_back(gpu);
    events.back().record();
  }
  events.front().synchronize();
  bp::Event last = std::move(events.back());
  events.clear();  // destroyed while later work may still run
  last.synchronize();
  CHECK(last.query());
}
