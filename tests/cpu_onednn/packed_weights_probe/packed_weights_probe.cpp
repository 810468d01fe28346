// packed_weights_probe SCENARIO: runs one scenario of convolutions whose weights the cpu backend
// may keep reordered (runtime/packed_weights.h), checking every result against the float64
// loops, then prints "wrong N" (results off by more than float32's tolerance) and the backend's
// counters, one "name value" line each. The packed weight tests run it in child processes, with
// BACKPLANE_CPU_CONV_LAYOUT=blocked so that the weights are reordered at all.
//
// Scenarios: repeat (one weight, three calls), mul_ / copy_ / out (the weight written in place
// between two calls), views (two weights in one storage, one of them written through the
// storage's other view), data_ptr (a weight whose address was handed out).
#include <backplane/backplane.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int g_wrong = 0;

// conv2d through the backend, against the same on float64 copies.
void convolve_and_check(const bp::Tensor& input, const bp::Tensor& weight) {
  const std::vector<double> got =
      bp::conv2d(input, weight, {}, {1, 1}, {1, 1}).to(bp::kFloat64).to_vector<double>();
  const std::vector<double> want =
      bp::conv2d(input.to(bp::kFloat64), weight.to(bp::kFloat64), {}, {1, 1}, {1, 1})
          .to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= 1e-4 * (1 + std::abs(want[i])))) {
      ++g_wrong;
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: packed_weights_probe SCENARIO\n");
    return 2;
  }
  const std::string scenario = argv[1];
  bp::manual_seed(7);
  // Channels that oneDNN's blocked layouts take whole.
  const bp::Tensor input = bp::randn({2, 32, 10, 10});
  bp::Tensor weight = bp::randn({32, 32, 3, 3});
  if (scenario == "repeat") {
    for (int call = 0; call < 3; ++call) convolve_and_check(input, weight);
  } else if (scenario == "mul_") {
    convolve_and_check(input, weight);
    weight.mul_(-2.0);
    convolve_and_check(input, weight);
  } else if (scenario == "copy_") {
    convolve_and_check(input, weight);
    weight.copy_(bp::randn({32, 32, 3, 3}));
    convolve_and_check(input, weight);
  } else if (scenario == "out") {
    convolve_and_check(input, weight);
    bp::Tensor target = weight;
    bp::mul_out(target, bp::randn({32, 32, 3, 3}), bp::randn({32, 32, 3, 3}));
    convolve_and_check(input, weight);
  } else if (scenario == "views") {
    const bp::Tensor both = bp::randn({64, 32, 3, 3});
    const bp::Tensor first = both.slice(0, 0, 32);
    const bp::Tensor second = both.slice(0, 32, 64);
    convolve_and_check(input, first);
    convolve_and_check(input, second);
    // Through another view of the same storage: `first` itself is never named.
    both.slice(0, 0, 16).fill_(0.5);
    convolve_and_check(input, first);
    convolve_and_check(input, second);
  } else if (scenario == "data_ptr") {
    float* address = weight.data_ptr<float>();
    convolve_and_check(input, weight);
    address[0] += 1;
    convolve_and_check(input, weight);
  } else {
    std::fprintf(stderr, "packed_weights_probe: no scenario '%s'\n", scenario.c_str());
    return 2;
  }
  std::printf("wrong %d\n", g_wrong);
  for (const bp::BackendCounter& counter : bp::backend_counters("cpu")) {
    std::printf("%s %llu\n", counter.name.c_str(), static_cast<unsigned long long>(counter.value));
  }
  return 0;
}
