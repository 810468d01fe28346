// Peak host memory of a process that only trains samples/train_digits's CNN (batch 64, 2
// threads): built twice, as training_memory_backplane and training_memory_torch, so that
// neither process carries the other framework's libraries. Prints the process's VmHWM
// (/proc/self/status) before the first step and after the last. See bench/README.md.
#if defined(TRAINING_MEMORY_TORCH)
#include "networks/torch_networks.h"
#else
#include "networks/backplane_networks.h"
#endif

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

namespace {

constexpr int kThreads = 2;
constexpr int64_t kBatch = 64;

// The process's peak resident memory so far, in KiB.
int64_t peak_resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) return std::strtoll(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

int run(int steps) {
  const std::vector<int64_t> image{1, networks::kDigitsSide, networks::kDigitsSide};
#if defined(TRAINING_MEMORY_TORCH)
  const char* framework = "libtorch";
  torch::set_num_threads(kThreads);
  networks::TorchTraining training(networks::TorchDigitsCnn(),
                                   networks::torch_random_inputs(kBatch, image),
                                   networks::torch_random_labels(kBatch, networks::kDigitsClasses));
#else
  const char* framework = "backplane";
  setenv("BACKPLANE_NUM_THREADS", std::to_string(kThreads).c_str(), /*overwrite=*/1);
  // Only the backend that runs the step, as libtorch here has no other: another plugin's
  // runtime (PoCL's, for OpenCL) would count in the peak otherwise.
  setenv("BACKPLANE_BACKENDS", "cpu", /*overwrite=*/1);
  networks::BackplaneTraining training(
      networks::BackplaneDigitsCnn(), networks::backplane_random_inputs(kBatch, image),
      networks::backplane_random_labels(kBatch, networks::kDigitsClasses));
#endif
  const int64_t before = peak_resident_kib();
  for (int i = 0; i < steps; ++i) training.step();
  std::printf(
      "%s: VmHWM %lld KiB after %d steps of the digits CNN at batch %lld (%lld KiB "
      "before the first)\n",
      framework, static_cast<long long>(peak_resident_kib()), steps, static_cast<long long>(kBatch),
      static_cast<long long>(before));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 100;
  if (argc > 2 || (argc == 2 &&
                   std::from_chars(argv[1], argv[1] + std::string_view(argv[1]).size(), steps).ec !=
                       std::errc())) {
    std::fprintf(stderr, "usage: %s [STEPS]   (default 100)\n", argv[0]);
    return 2;
  }
  return run(steps);
}
