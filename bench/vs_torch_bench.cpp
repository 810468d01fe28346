// The CPU backend against libtorch on the CPU, op by op, both on 2 threads
// (BACKPLANE_NUM_THREADS and torch::set_num_threads), each row's two sides registered one after
// the other so that they run interleaved in one process: the layers of ResNet-50 (convolutions,
// max pooling, batch norm) at batch 1 and 8, those of a BERT-base encoder (linear, layer norm,
// gelu, softmax, attention; sequence 128) at batch 1 and 8, row and column reductions of a
// 4096x4096 matrix, a convolution small enough that per-call cost is all it measures, and a
// one-element add. The console report ends with Backplane's time over libtorch's for each row.
// See bench/README.md.
#include "ratio_reporter.h"
#include "resnet50_layers.h"

#include <backplane/backplane.h>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 2;
constexpr int64_t kSequence = 128, kHidden = 768, kFeedForward = 3072, kHeads = 12;

using Step = std::function<void()>;
using Shape = std::vector<int64_t>;

// One op on each side: each maker draws the inputs and returns the call that is timed.
struct Row {
  std::string name;
  std::function<Step()> backplane;
  std::function<Step()> torch;
  std::string target = "<= 1.0x";
};

bp::Tensor bp_random(const Shape& shape) { return bp::randn(shape); }
torch::Tensor torch_random(const Shape& shape) { return torch::randn(shape); }

std::vector<Row> conv_rows() {
  std::vector<Row> rows;
  for (const int64_t batch : {1, 8}) {
    for (const bench::ConvLayer& layer : bench::kResNet50Layers) {
      const Shape input{batch, layer.in_channels, layer.size, layer.size};
      const Shape weight{layer.out_channels, layer.in_channels, layer.kernel, layer.kernel};
      const int64_t stride = layer.stride, padding = layer.padding;
      rows.push_back({fmt::format("conv2d {}, batch {}", layer.name, batch),
                      [=] {
                        const bp::Tensor x = bp_random(input), w = bp_random(weight),
                                         b = bp_random({weight[0]});
                        return Step([=] {
                          benchmark::DoNotOptimize(
                              bp::conv2d(x, w, b, {stride, stride}, {padding, padding}).impl());
                        });
                      },
                      [=] {
                        const torch::Tensor x = torch_random(input), w = torch_random(weight),
                                            b = torch_random({weight[0]});
                        return Step([=] {
                          benchmark::DoNotOptimize(
                              torch::conv2d(x, w, b, stride, padding).data_ptr());
                        });
                      }});
    }
  }
  rows.push_back(
      {"conv2d 1x8x8x8, 8 filters 3x3 (per-call cost)",
       [] {
         const bp::Tensor x = bp_random({1, 8, 8, 8}), w = bp_random({8, 8, 3, 3});
         return Step([=] { benchmark::DoNotOptimize(bp::conv2d(x, w).impl()); });
       },
       [] {
         const torch::Tensor x = torch_random({1, 8, 8, 8}), w = torch_random({8, 8, 3, 3});
         return Step([=] { benchmark::DoNotOptimize(torch::conv2d(x, w).data_ptr()); });
       },
       "<= 0.5x"});
  return rows;
}

std::vector<Row> resnet_rows() {
  std::vector<Row> rows;
  for (const int64_t batch : {1, 8}) {
    const Shape stem{batch, 64, 112, 112}, features{batch, 256, 56, 56};
    rows.push_back(
        {fmt::format("max_pool2d 3x3/2 {}x64x112x112", batch),
         [=] {
           const bp::Tensor x = bp_random(stem);
           return Step([=] {
             benchmark::DoNotOptimize(bp::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}).impl());
           });
         },
         [=] {
           const torch::Tensor x = torch_random(stem);
           return Step([=] { benchmark::DoNotOptimize(torch::max_pool2d(x, 3, 2, 1).data_ptr()); });
         }});
    rows.push_back(
        {fmt::format("batch_norm (inference) {}x256x56x56", batch),
         [=] {
           const bp::Tensor x = bp_random(features), w = bp_random({256}), b = bp_random({256}),
                            mean = bp_random({256}), var = bp::rand({256}) + 0.5;
           return Step([=] {
             benchmark::DoNotOptimize(
                 bp::batch_norm(x, w, b, mean, var, false, 0.1, 1e-5, true).impl());
           });
         },
         [=] {
           const torch::Tensor x = torch_random(features), w = torch_random({256}),
                               b = torch_random({256}), mean = torch_random({256}),
                               var = torch::rand({256}) + 0.5;
           return Step([=] {
             benchmark::DoNotOptimize(
                 torch::batch_norm(x, w, b, mean, var, false, 0.1, 1e-5, false).data_ptr());
           });
         }});
  }
  return rows;
}

std::vector<Row> bert_rows() {
  std::vector<Row> rows;
  for (const int64_t batch : {1, 8}) {
    const int64_t tokens = batch * kSequence, head = kHidden / kHeads;
    const Shape hidden{tokens, kHidden}, wide{tokens, kFeedForward};
    const Shape heads{batch, kHeads, kSequence, head}, scores{batch, kHeads, kSequence, kSequence};
    rows.push_back(
        {fmt::format("linear {}x768 -> 3072", tokens),
         [=] {
           const bp::Tensor x = bp_random(hidden), w = bp_random({kFeedForward, kHidden}),
                            b = bp_random({kFeedForward});
           return Step([=] { benchmark::DoNotOptimize(bp::linear(x, w, b).impl()); });
         },
         [=] {
           const torch::Tensor x = torch_random(hidden), w = torch_random({kFeedForward, kHidden}),
                               b = torch_random({kFeedForward});
           return Step([=] { benchmark::DoNotOptimize(torch::linear(x, w, b).data_ptr()); });
         }});
    rows.push_back({fmt::format("layer_norm {}x768", tokens),
                    [=] {
                      const bp::Tensor x = bp_random(hidden), w = bp_random({kHidden}),
                                       b = bp_random({kHidden});
                      return Step([=] {
                        benchmark::DoNotOptimize(bp::layer_norm(x, {kHidden}, w, b).impl());
                      });
                    },
                    [=] {
                      const torch::Tensor x = torch_random(hidden), w = torch_random({kHidden}),
                                          b = torch_random({kHidden});
                      return Step([=] {
                        benchmark::DoNotOptimize(torch::layer_norm(x, {kHidden}, w, b).data_ptr());
                      });
                    }});
    rows.push_back({fmt::format("gelu {}x3072", tokens),
                    [=] {
                      const bp::Tensor x = bp_random(wide);
                      return Step([=] { benchmark::DoNotOptimize(bp::gelu(x).impl()); });
                    },
                    [=] {
                      const torch::Tensor x = torch_random(wide);
                      return Step([=] { benchmark::DoNotOptimize(torch::gelu(x).data_ptr()); });
                    }});
    rows.push_back({fmt::format("softmax {}x12x128x128", batch),
                    [=] {
                      const bp::Tensor x = bp_random(scores);
                      return Step([=] { benchmark::DoNotOptimize(bp::softmax(x, -1).impl()); });
                    },
                    [=] {
                      const torch::Tensor x = torch_random(scores);
                      return Step(
                          [=] { benchmark::DoNotOptimize(torch::softmax(x, -1).data_ptr()); });
                    }});
    rows.push_back({fmt::format("attention {}x12x128x64", batch),
                    [=] {
                      const bp::Tensor q = bp_random(heads), k = bp_random(heads),
                                       v = bp_random(heads);
                      return Step([=] {
                        benchmark::DoNotOptimize(bp::scaled_dot_product_attention(q, k, v).impl());
                      });
                    },
                    [=] {
                      const torch::Tensor q = torch_random(heads), k = torch_random(heads),
                                          v = torch_random(heads);
                      return Step([=] {
                        benchmark::DoNotOptimize(
                            std::get<0>(at::_scaled_dot_product_attention(q, k, v)).data_ptr());
                      });
                    }});
  }
  return rows;
}

std::vector<Row> reduction_rows() {
  const Shape square{4096, 4096};
  const auto reduction = [&](std::string name, int64_t dim, bool mean) {
    return Row{std::move(name),
               [=] {
                 const bp::Tensor x = bp_random(square);
                 return Step([=] {
                   benchmark::DoNotOptimize((mean ? bp::mean(x, {dim}) : bp::sum(x, {dim})).impl());
                 });
               },
               [=] {
                 const torch::Tensor x = torch_random(square);
                 return Step([=] {
                   benchmark::DoNotOptimize(
                       (mean ? torch::mean(x, {dim}) : torch::sum(x, {dim})).data_ptr());
                 });
               }};
  };
  std::vector<Row> rows{reduction("sum over rows 4096x4096", 1, false),
                        reduction("sum over columns 4096x4096", 0, false),
                        reduction("mean over rows 4096x4096", 1, true)};
  rows.push_back(
      {"layer_norm 4096x1024",
       [] {
         const bp::Tensor x = bp_random({4096, 1024}), w = bp_random({1024}), b = bp_random({1024});
         return Step([=] { benchmark::DoNotOptimize(bp::layer_norm(x, {1024}, w, b).impl()); });
       },
       [] {
         const torch::Tensor x = torch_random({4096, 1024}), w = torch_random({1024}),
                             b = torch_random({1024});
         return Step(
             [=] { benchmark::DoNotOptimize(torch::layer_norm(x, {1024}, w, b).data_ptr()); });
       }});
  rows.push_back({"add of one element",
                  [] {
                    const bp::Tensor x = bp_random({1}), y = bp_random({1});
                    return Step([=] { benchmark::DoNotOptimize(bp::add(x, y).impl()); });
                  },
                  [] {
                    const torch::Tensor x = torch_random({1}), y = torch_random({1});
                    return Step([=] { benchmark::DoNotOptimize(torch::add(x, y).data_ptr()); });
                  }});
  return rows;
}

std::vector<Row> all_rows() {
  std::vector<Row> rows;
  for (auto family : {conv_rows, resnet_rows, bert_rows, reduction_rows}) {
    for (Row& row : family()) rows.push_back(std::move(row));
  }
  return rows;
}

// Times `make`'s step after one call that builds each side's caches (oneDNN primitives,
// allocator blocks).
void time_step(benchmark::State& state, const std::function<Step()>& make) {
  const Step step = make();
  step();
  for (auto _ : state) step();
}

std::vector<bench::Ratio> register_rows() {
  std::vector<bench::Ratio> ratios;
  for (const Row& row : all_rows()) {
    for (const auto& [side, make] :
         {std::pair{"backplane", row.backplane}, std::pair{"libtorch", row.torch}}) {
      benchmark::RegisterBenchmark((row.name + "/" + side).c_str(), time_step, make)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
    ratios.push_back({row.name + ", Backplane / libtorch", row.name + "/backplane",
                      row.name + "/libtorch", row.target});
  }
  return ratios;
}

}  // namespace

int main(int argc, char** argv) {
  // Read by the CPU backend when it loads, on the first Backplane call below.
  setenv("BACKPLANE_NUM_THREADS", std::to_string(kThreads).c_str(), /*overwrite=*/1);
  torch::set_num_threads(kThreads);
  std::vector<bench::Ratio> ratios = register_rows();
  return bench::run_with_ratios(argc, argv, std::move(ratios), kThreads, isatty(fileno(stdout)));
}
