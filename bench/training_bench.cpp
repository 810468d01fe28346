// Training on Backplane's CPU backend against libtorch on the CPU, in one run, both on 2
// threads (BACKPLANE_NUM_THREADS and torch::set_num_threads):
//   - one training step (forward, cross_entropy, backward, AdamW) of samples/train_digits's CNN
//     at batch 64 and of a 784-512-512-512-10 MLP at batch 256 (bench/networks/), Backplane's
//     time over libtorch's;
//   - autograd's cost on 1-element tensors: three ops (mul, add, tanh) recorded and then
//     differentiated, over the same three ops with nothing recorded, on each side.
// The console report ends with those ratios, of the medians where repetitions were asked
// for. See bench/README.md.
#include "networks/backplane_networks.h"
#include "networks/torch_networks.h"
#include "ratio_reporter.h"

#include <backplane/backplane.h>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 2;
constexpr int64_t kCnnBatch = 64;
constexpr int64_t kMlpBatch = 256;
const std::vector<int64_t> kMlpWidths{784, 512, 512, 512, 10};
const std::vector<int64_t> kDigitsImage{1, networks::kDigitsSide, networks::kDigitsSide};

const std::string kCnnStep = "digits CNN training step, batch 64";
const std::string kMlpStep = "MLP 784-512-512-512-10 training step, batch 256";
const std::string kTinyOps = "mul, add, tanh on 1 element";

// The first steps create each side's primitives and caches (oneDNN's, the allocators'), and
// AdamW's state: the benchmarks time the steps after them.
template <typename Training>
void warm_up(Training& training) {
  for (int i = 0; i < 3; ++i) training.step();
}

void backplane_cnn_step(benchmark::State& state) {
  bp::manual_seed(0);
  networks::BackplaneTraining training(
      networks::BackplaneDigitsCnn(), networks::backplane_random_inputs(kCnnBatch, kDigitsImage),
      networks::backplane_random_labels(kCnnBatch, networks::kDigitsClasses));
  warm_up(training);
  for (auto _ : state) training.step();
}

void torch_cnn_step(benchmark::State& state) {
  torch::manual_seed(0);
  networks::TorchTraining training(
      networks::TorchDigitsCnn(), networks::torch_random_inputs(kCnnBatch, kDigitsImage),
      networks::torch_random_labels(kCnnBatch, networks::kDigitsClasses));
  warm_up(training);
  for (auto _ : state) training.step();
}

void backplane_mlp_step(benchmark::State& state) {
  bp::manual_seed(0);
  networks::BackplaneTraining training(
      networks::BackplaneMlp(kMlpWidths),
      networks::backplane_random_inputs(kMlpBatch, {kMlpWidths.front()}),
      networks::backplane_random_labels(kMlpBatch, kMlpWidths.back()));
  warm_up(training);
  for (auto _ : state) training.step();
}

void torch_mlp_step(benchmark::State& state) {
  torch::manual_seed(0);
  networks::TorchTraining training(networks::TorchMlp(kMlpWidths),
                                   networks::torch_random_inputs(kMlpBatch, {kMlpWidths.front()}),
                                   networks::torch_random_labels(kMlpBatch, kMlpWidths.back()));
  warm_up(training);
  for (auto _ : state) training.step();
}

void backplane_tiny_ops(benchmark::State& state, bool record) {
  std::vector<bp::Tensor> leaves{bp::full({1}, 0.5f), bp::full({1}, 1.5f), bp::full({1}, 0.25f)};
  for (bp::Tensor& leaf : leaves) leaf.requires_grad_(record);
  for (auto _ : state) {
    const bp::Tensor y = bp::tanh(leaves[0] * leaves[1] + leaves[2]);
    if (record) {
      for (bp::Tensor& leaf : leaves) leaf.mutable_grad() = bp::Tensor();
      y.backward();
    }
    benchmark::DoNotOptimize(y.impl());
  }
}

void torch_tiny_ops(benchmark::State& state, bool record) {
  std::vector<torch::Tensor> leaves{torch::full({1}, 0.5f), torch::full({1}, 1.5f),
                                    torch::full({1}, 0.25f)};
  for (torch::Tensor& leaf : leaves) leaf.requires_grad_(record);
  for (auto _ : state) {
    const torch::Tensor y = torch::tanh(leaves[0] * leaves[1] + leaves[2]);
    if (record) {
      for (torch::Tensor& leaf : leaves) leaf.mutable_grad() = torch::Tensor();
      y.backward();
    }
    benchmark::DoNotOptimize(y.data_ptr());
  }
}

std::vector<bench::Ratio> ratios() {
  return {
      {kCnnStep + ", Backplane / libtorch", kCnnStep + "/backplane", kCnnStep + "/libtorch",
       "<= 1.0x"},
      {kMlpStep + ", Backplane / libtorch", kMlpStep + "/backplane", kMlpStep + "/libtorch",
       "<= 1.0x"},
      {kTinyOps + ", Backplane: recorded + backward / no grad",
       kTinyOps + "/backplane recorded + backward", kTinyOps + "/backplane no grad", "reported"},
      {kTinyOps + ", libtorch: recorded + backward / no grad",
       kTinyOps + "/libtorch recorded + backward", kTinyOps + "/libtorch no grad", "reported"},
      {kTinyOps + ", recorded + backward, Backplane / libtorch",
       kTinyOps + "/backplane recorded + backward", kTinyOps + "/libtorch recorded + backward",
       "reported"},
      {kTinyOps + ", no grad, Backplane / libtorch", kTinyOps + "/backplane no grad",
       kTinyOps + "/libtorch no grad", "reported"},
  };
}

void register_benchmarks() {
  const auto add = [](const std::string& name, auto&&... function) {
    benchmark::RegisterBenchmark(name.c_str(), function...)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  };
  add(kCnnStep + "/backplane", backplane_cnn_step);
  add(kCnnStep + "/libtorch", torch_cnn_step);
  add(kMlpStep + "/backplane", backplane_mlp_step);
  add(kMlpStep + "/libtorch", torch_mlp_step);
  add(kTinyOps + "/backplane no grad", backplane_tiny_ops, false);
  add(kTinyOps + "/backplane recorded + backward", backplane_tiny_ops, true);
  add(kTinyOps + "/libtorch no grad", torch_tiny_ops, false);
  add(kTinyOps + "/libtorch recorded + backward", torch_tiny_ops, true);
}

}  // namespace

int main(int argc, char** argv) {
  // Read by the CPU backend when it loads, on the first Backplane call below.
  setenv("BACKPLANE_NUM_THREADS", std::to_string(kThreads).c_str(), /*overwrite=*/1);
  torch::set_num_threads(kThreads);
  register_benchmarks();
  return bench::run_with_ratios(argc, argv, ratios(), kThreads, isatty(fileno(stdout)));
}
