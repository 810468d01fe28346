// Whole models on the CPU backend against libtorch on the CPU, inference in float32, both on 2
// threads (BACKPLANE_NUM_THREADS and torch::set_num_threads): ResNet-18 on 224x224 images at
// batch 1 and 8 (resnet18.h) and a 12-layer BERT-base encoder on sequences of 128 at batch 1 and
// 4 (bert_encoder.h), each built in both libraries from the same seeded weights. Before anything
// is timed, each model's two outputs are compared: a relative difference over kTolerance ends the
// program with an error. Each row's two sides are registered one after the other so that they
// run interleaved in one process; the console report ends with Backplane's time over libtorch's.
// --reduced runs smaller models (64x64 images, one encoder layer on sequences of 32) for the
// smoke check of `make test`. See bench/README.md.
#include "bert_encoder.h"
#include "model_weights.h"
#include "ratio_reporter.h"
#include "resnet18.h"

#include <backplane/backplane.h>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 2;
constexpr uint64_t kSeed = 20261128;
// Largest |Backplane - libtorch| over largest |libtorch| that counts as the same result.
constexpr double kTolerance = 1e-3;

struct BackplaneOps {
  using Tensor = bp::Tensor;

  static Tensor from_host(const bench::HostTensor& host) {
    return bp::from_vector(host.values, host.sizes);
  }
  static std::vector<float> to_host(const Tensor& t) { return t.contiguous().to_vector<float>(); }
  static std::vector<int64_t> sizes(const Tensor& t) {
    return {t.sizes().begin(), t.sizes().end()};
  }

  static Tensor conv2d(const Tensor& x, const Tensor& weight, int64_t stride, int64_t padding) {
    return bp::conv2d(x, weight, std::nullopt, {stride, stride}, {padding, padding});
  }
  static Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           const Tensor& mean, const Tensor& var, double eps) {
    return bp::batch_norm_inference(x, weight, bias, mean, var, eps);
  }
  static Tensor relu_(Tensor x) { return x.relu_(); }
  static Tensor add_(Tensor x, const Tensor& y) { return x.add_(y); }
  static Tensor max_pool2d(const Tensor& x) { return bp::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}); }
  static Tensor global_average_pool(const Tensor& x) {
    return bp::flatten(bp::adaptive_avg_pool2d(x, {1, 1}), 1);
  }
  static Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    return bp::linear(x, weight, bias);
  }
  static Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
    return bp::layer_norm(x, {x.size(-1)}, weight, bias, eps);
  }
  static Tensor gelu(const Tensor& x) { return bp::gelu(x); }
  // The heads are strided views of the projection; scaled_dot_product_attention hands them to
  // the CPU backend's fused kernel as they are.
  static Tensor attention(const Tensor& qkv, int64_t batch, int64_t heads) {
    const int64_t tokens = qkv.size(0), hidden = qkv.size(1) / 3;
    const Tensor parts =
        qkv.view({batch, tokens / batch, 3, heads, hidden / heads}).permute({2, 0, 3, 1, 4});
    const Tensor context = bp::scaled_dot_product_attention(parts.select(0, 0), parts.select(0, 1),
                                                            parts.select(0, 2));
    return context.permute({0, 2, 1, 3}).reshape({tokens, hidden});
  }
};

struct TorchOps {
  using Tensor = torch::Tensor;

  static Tensor from_host(const bench::HostTensor& host) {
    return torch::from_blob(const_cast<float*>(host.values.data()), host.sizes, torch::kFloat32)
        .clone();
  }
  static std::vector<float> to_host(const Tensor& t) {
    const Tensor c = t.contiguous();
    return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
  }
  static std::vector<int64_t> sizes(const Tensor& t) { return t.sizes().vec(); }

  static Tensor conv2d(const Tensor& x, const Tensor& weight, int64_t stride, int64_t padding) {
    return torch::conv2d(x, weight, {}, stride, padding);
  }
  static Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           const Tensor& mean, const Tensor& var, double eps) {
    return torch::batch_norm(x, weight, bias, mean, var, /*training=*/false, 0.1, eps, false);
  }
  static Tensor relu_(Tensor x) { return x.relu_(); }
  static Tensor add_(Tensor x, const Tensor& y) { return x.add_(y); }
  static Tensor max_pool2d(const Tensor& x) { return torch::max_pool2d(x, 3, 2, 1); }
  static Tensor global_average_pool(const Tensor& x) {
    return torch::flatten(torch::adaptive_avg_pool2d(x, {1, 1}), 1);
  }
  static Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    return torch::linear(x, weight, bias);
  }
  static Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
    return torch::layer_norm(x, {x.size(-1)}, weight, bias, eps);
  }
  static Tensor gelu(const Tensor& x) { return torch::gelu(x); }
  // libtorch 1.13 has no fused attention on the CPU: its attention is these matrix products and
  // softmax.
  static Tensor attention(const Tensor& qkv, int64_t batch, int64_t heads) {
    const int64_t tokens = qkv.size(0), hidden = qkv.size(1) / 3, head = hidden / heads;
    const Tensor parts = qkv.view({batch, tokens / batch, 3, heads, head}).permute({2, 0, 3, 1, 4});
    const Tensor scores = torch::matmul(parts[0], parts[1].transpose(-2, -1))
                              .mul_(1.0 / std::sqrt(static_cast<double>(head)));
    const Tensor context = torch::matmul(torch::softmax(scores, -1), parts[2]);
    return context.permute({0, 2, 1, 3}).reshape({tokens, hidden});
  }
};

using Step = std::function<void()>;

// One model at one batch size: each side's forward pass, ready to time.
struct Row {
  std::string name;
  Step backplane;
  Step torch;
};

// Whether the two outputs agree within kTolerance; says so either way.
bool same_result(const std::string& name, const bp::Tensor& ours, const torch::Tensor& theirs) {
  if (BackplaneOps::sizes(ours) != TorchOps::sizes(theirs)) {
    fmt::print(stderr, "error: {}: Backplane's output has shape {} and libtorch's {}\n", name,
               BackplaneOps::sizes(ours), TorchOps::sizes(theirs));
    return false;
  }
  const std::vector<float> a = BackplaneOps::to_host(ours), b = TorchOps::to_host(theirs);
  double difference = 0, largest = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    difference = std::max<double>(difference, std::fabs(a[i] - b[i]));
    largest = std::max<double>(largest, std::fabs(b[i]));
  }
  const double relative = difference / largest;
  if (!(relative <= kTolerance)) {  // NaN fails too
    fmt::print(stderr,
               "error: {}: max |Backplane - libtorch| / max |libtorch| = {:.3g}, over the {:g} "
               "that counts as the same result, so their times would not compare the same "
               "work: one of the model's ops computes something else on one side; compare its "
               "layers' outputs one by one to find it.\n",
               name, relative, kTolerance);
    return false;
  }
  fmt::print(
      "{}: max |Backplane - libtorch| / max |libtorch| = {:.2g} (limit {:g}; max "
      "|libtorch| = {:.3g})\n",
      name, relative, kTolerance, largest);
  return true;
}

// The rows of a model at each batch size, its outputs checked first; nothing where a check
// fails. make_model(Ops{}) builds a library's model, forward(Ops{}, model, input) runs it.
template <typename Make, typename Forward>
std::optional<std::vector<Row>> model_rows(
    const std::function<std::string(int64_t)>& name, const std::vector<int64_t>& batches,
    const std::function<std::vector<int64_t>(int64_t)>& shape, const Make& make_model,
    const Forward& forward) {
  const auto ours = make_model(BackplaneOps{});
  const auto theirs = make_model(TorchOps{});
  std::vector<Row> rows;
  for (const int64_t batch : batches) {
    const bench::HostTensor input =
        bench::WeightGenerator(kSeed + static_cast<uint64_t>(batch)).normal(shape(batch), 0, 1);
    const bp::Tensor x = BackplaneOps::from_host(input);
    const torch::Tensor y = TorchOps::from_host(input);
    const auto backplane_step = [=] {
      const bp::NoGradGuard no_grad;
      return forward(BackplaneOps{}, *ours, x);
    };
    const auto torch_step = [=] {
      const c10::InferenceMode inference;
      return forward(TorchOps{}, *theirs, y);
    };
    if (!same_result(name(batch), backplane_step(), torch_step())) return std::nullopt;
    rows.push_back({name(batch), [=] { benchmark::DoNotOptimize(backplane_step().impl()); },
                    [=] { benchmark::DoNotOptimize(torch_step().data_ptr()); }});
  }
  return rows;
}

std::optional<std::vector<Row>> resnet_rows(int64_t image) {
  const bench::resnet18::Network<bench::HostTensor> host = bench::resnet18::random_network(kSeed);
  return model_rows(
      [=](int64_t batch) { return fmt::format("ResNet-18 {0}x{0}, batch {1}", image, batch); },
      {1, 8},
      [=](int64_t batch) {
        return std::vector<int64_t>{batch, bench::resnet18::kChannels, image, image};
      },
      [&](auto ops) {
        using Ops = decltype(ops);
        return std::make_shared<bench::resnet18::Network<typename Ops::Tensor>>(
            bench::resnet18::convert<typename Ops::Tensor>(host, Ops::from_host));
      },
      [](auto ops, const auto& network, const auto& images) {
        return bench::resnet18::forward<decltype(ops)>(network, images);
      });
}

std::optional<std::vector<Row>> bert_rows(const bench::bert::Config& config, int64_t sequence) {
  const bench::bert::Encoder<bench::HostTensor> host = bench::bert::random_encoder(config, kSeed);
  return model_rows(
      [=](int64_t batch) {
        return fmt::format("BERT-base encoder, {} layer{}, sequence {}, batch {}", config.layers,
                           config.layers == 1 ? "" : "s", sequence, batch);
      },
      {1, 4},
      [=](int64_t batch) {
        return std::vector<int64_t>{batch, sequence, config.hidden};
      },
      [&](auto ops) {
        using Ops = decltype(ops);
        return std::make_shared<bench::bert::Encoder<typename Ops::Tensor>>(
            bench::bert::convert<typename Ops::Tensor>(host, Ops::from_host));
      },
      [heads = config.heads](auto ops, const auto& encoder, const auto& hidden) {
        return bench::bert::forward<decltype(ops)>(encoder, heads, hidden);
      });
}

// Times `step` after one call that builds each side's caches (oneDNN primitives, allocator
// blocks).
void time_step(benchmark::State& state, const Step& step) {
  step();
  for (auto _ : state) step();
}

std::vector<bench::Ratio> register_rows(const std::vector<Row>& rows) {
  std::vector<bench::Ratio> ratios;
  for (const Row& row : rows) {
    for (const auto& [side, step] :
         {std::pair{"backplane", row.backplane}, std::pair{"libtorch", row.torch}}) {
      benchmark::RegisterBenchmark((row.name + "/" + side).c_str(), time_step, step)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
    ratios.push_back({row.name + ", Backplane / libtorch", row.name + "/backplane",
                      row.name + "/libtorch", "<= 0.9x"});
  }
  return ratios;
}

// Removes `flag` from the arguments, which Google Benchmark would refuse; whether it was there.
bool take_flag(int& argc, char** argv, const char* flag) {
  const auto end = std::remove_if(argv + 1, argv + argc,
                                  [&](const char* arg) { return std::strcmp(arg, flag) == 0; });
  const bool found = end != argv + argc;
  argc = static_cast<int>(end - argv);
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  const bool reduced = take_flag(argc, argv, "--reduced");
  // Read by the CPU backend when it loads, on the first Backplane call below.
  setenv("BACKPLANE_NUM_THREADS", std::to_string(kThreads).c_str(), /*overwrite=*/1);
  torch::set_num_threads(kThreads);
  bench::bert::Config bert;
  if (reduced) bert.layers = 1;
  std::optional<std::vector<Row>> rows = resnet_rows(reduced ? 64 : 224);
  if (!rows) return 1;
  const std::optional<std::vector<Row>> encoder_rows = bert_rows(bert, reduced ? 32 : 128);
  if (!encoder_rows) return 1;
  rows->insert(rows->end(), encoder_rows->begin(), encoder_rows->end());
  std::vector<bench::Ratio> ratios = register_rows(*rows);
  return bench::run_with_ratios(argc, argv, std::move(ratios), kThreads, isatty(fileno(stdout)));
}
