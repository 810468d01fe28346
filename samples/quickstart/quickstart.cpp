// A small MLP forward pass (matmul, add, relu, softmax) on every loaded device, each result
// checked against the CPU, printed as a table.
#include <backplane/backplane.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Mlp {
  bp::Tensor w1, b1, w2, b2;

  Mlp to(bp::Device device) const {
    return {w1.to(device), b1.to(device), w2.to(device), b2.to(device)};
  }

  bp::Tensor forward(const bp::Tensor& x) const {
    bp::Tensor hidden = bp::relu(bp::add(bp::matmul(x, w1), b1));
    return bp::softmax(bp::add(bp::matmul(hidden, w2), b2), /*dim=*/1);
  }
};

template <typename... Args>
std::string format(const char* pattern, Args... args) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, args...);
  return text;
}

float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float worst = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

}  // namespace

int main() {
  bp::manual_seed(42);
  const int64_t batch = 64, features = 128, hidden = 256, classes = 10;
  Mlp cpu_model;
  bp::Tensor x;
  std::vector<float> expected;
  try {
    cpu_model = {bp::randn({features, hidden}), bp::randn({hidden}), bp::randn({hidden, classes}),
                 bp::randn({classes})};
    x = bp::randn({batch, features});
    expected = cpu_model.forward(x).to_vector<float>();
  } catch (const bp::Error& e) {
    // Every device's result is checked against the CPU's, so without it there is nothing to show.
    std::fprintf(stderr, "quickstart: the reference run on the CPU failed: %s\n", e.what());
    return 1;
  }

  std::printf("Backplane quickstart: MLP %lldx%lld -> %lld -> %lld, softmax over classes\n\n",
              static_cast<long long>(batch), static_cast<long long>(features),
              static_cast<long long>(hidden), static_cast<long long>(classes));
  std::printf("%-10s %-40s %-8s %-14s %s\n", "device", "name", "result", "max |diff|", "time");

  int failures = 0;
  const bp::RuntimeInfo runtime = bp::runtime_info();
  for (const bp::PluginInfo& plugin : runtime.plugins) {
    for (const bp::DeviceInfo& device : plugin.devices) {
      std::string status = "ok";
      std::string difference = "-";
      std::string elapsed = "-";
      try {
        const Mlp model = cpu_model.to(device.device);
        const bp::Tensor input = x.to(device.device);
        const auto start = std::chrono::steady_clock::now();
        const bp::Tensor y = model.forward(input).cpu();
        const auto stop = std::chrono::steady_clock::now();
        const float diff = max_abs_difference(y.to_vector<float>(), expected);
        difference = format("%.2e", diff);
        elapsed =
            format("%.3f ms", std::chrono::duration<double, std::milli>(stop - start).count());
        if (!(diff <= 1e-4f)) {
          status = "WRONG";
          ++failures;
        }
      } catch (const bp::Error& e) {
        // A backend that lacks one of the ops is reported, not counted as a wrong result.
        const bool unsupported = e.code() == bp::ErrorCode::NotImplemented;
        status = unsupported ? "skipped" : "failed";
        difference = e.what();
        if (!unsupported) ++failures;
      }
      std::printf("%-10s %-40.40s %-8s %-14s %s\n", device.device.str().c_str(),
                  device.name.c_str(), status.c_str(), difference.c_str(), elapsed.c_str());
    }
  }
  for (const bp::PluginFailure& failure : runtime.failures) {
    std::printf("\nplugin not loaded: %s: %s\n", failure.path.c_str(), failure.reason.c_str());
  }
  return failures == 0 ? 0 : 1;
}
