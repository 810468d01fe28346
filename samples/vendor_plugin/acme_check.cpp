// Checks the Acme plugin end to end: it loads (through BACKPLANE_PLUGIN_PATH), its three ops
// dispatch to acme:0 and agree with the CPU, and an op it lacks fails with a clear message.
#include <backplane/backplane.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool condition, const std::string& what) {
  std::printf("%s %s\n", condition ? "ok  " : "FAIL", what.c_str());
  if (!condition) ++failures;
}

bool close(const bp::Tensor& on_acme, const bp::Tensor& on_cpu) {
  return std::ranges::equal(on_acme.cpu().to_vector<float>(), on_cpu.to_vector<float>(),
                            [](float a, float b) { return std::fabs(a - b) <= 1e-6f; });
}

}  // namespace

int main() {
  const bp::RuntimeInfo runtime = bp::runtime_info();
  const bp::PluginInfo* acme = nullptr;
  for (const bp::PluginInfo& plugin : runtime.plugins) {
    if (plugin.name == "acme") acme = &plugin;
  }
  expect(acme != nullptr, "the acme plugin is loaded");
  if (acme == nullptr) {
    for (const bp::PluginFailure& f : runtime.failures) {
      std::printf("     failure: %s: %s\n", f.path.c_str(), f.reason.c_str());
    }
    return 1;
  }
  expect(acme->devices.size() == 1, "acme has one device");
  expect(acme->ops == std::vector<std::string>{"add.out", "mul.out", "relu.out"},
         "acme implements add.out, mul.out and relu.out");

  const bp::Device device("acme:0");
  bp::manual_seed(7);
  const bp::Tensor x = bp::randn({4, 5});
  const bp::Tensor row = bp::randn({5});
  const bp::Tensor xt = bp::randn({5, 4}).transpose(0, 1);  // not contiguous

  const bp::Tensor sum = bp::add(x.to(device), row.to(device), /*alpha=*/2);
  expect(sum.device() == device, "add's result lives on acme:0");
  expect(close(sum, bp::add(x, row, 2)), "add with broadcasting and alpha matches the CPU");
  expect(close(bp::mul(x.to(device), xt.to(device)), bp::mul(x, xt)),
         "mul of a transposed operand matches the CPU");
  expect(close(bp::relu(x.to(device)), bp::relu(x)), "relu matches the CPU");

  try {
    bp::sub(x.to(device), x.to(device));
    expect(false, "sub on acme:0 reports that acme lacks it");
  } catch (const bp::Error& e) {
    const std::string message = e.what();
    expect(e.code() == bp::ErrorCode::NotImplemented && message.find("acme") != std::string::npos,
           "sub on acme:0 reports that acme lacks it: " + message);
  }
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
