// OpenCL backend benchmarks, each reported next to its reference measured in the same run:
//   add of two 16M-element Float tensors, a 1024^3 Float matmul and a ResNet-50 3x3 conv2d, on
//   the CPU backend and on every OpenCL device;
//   softmax and sum over the rows of a 2048 x 2048 Float matrix, sum over its columns, and its
//   sum, on the CPU backend and on every OpenCL device;
//   elementwise ops whose operands are not all dense (broadcast along rows or columns, a
//   transposed input) on a 4096 x 4096 Float matrix, on the CPU backend and on every OpenCL device;
//   attention through the fused kernel against its composite path, on every OpenCL device;
//   process start to first kernel result, in a fresh child process, with the program cache
//   (and the driver's own, PoCL's) cold or warm.
// Run: bench_opencl [google benchmark flags]. The child mode (--first-kernel DEVICE) is internal.
#include <backplane/backplane.h>

#include <benchmark/benchmark.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace {

// Waits for `device`'s queue: reading one element back is ordered after every kernel before.
void wait_for(const bp::Tensor& t) { (void)t.flatten().slice(0, 0, 1).cpu(); }

void BM_Add16M(benchmark::State& state, bp::Device device) {
  const int64_t n = int64_t{16} << 20;
  const bp::Tensor a = bp::randn({n}).to(device), b = bp::randn({n}).to(device);
  bp::Tensor out = bp::empty({n}, bp::kFloat32, device);
  bp::add_out(out, a, b);
  wait_for(out);
  for (auto _ : state) {
    bp::add_out(out, a, b);
    wait_for(out);
  }
  state.SetBytesProcessed(state.iterations() * n * 3 * static_cast<int64_t>(sizeof(float)));
}

void BM_Mm1024(benchmark::State& state, bp::Device device) {
  const int64_t n = 1024;
  const bp::Tensor a = bp::randn({n, n}).to(device), b = bp::randn({n, n}).to(device);
  bp::Tensor out = bp::empty({n, n}, bp::kFloat32, device);
  bp::mm_out(out, a, b);
  wait_for(out);
  for (auto _ : state) {
    bp::mm_out(out, a, b);
    wait_for(out);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 2.0 * n * n * n / 1e9, benchmark::Counter::kIsRate);
}

// conv2d of ResNet-50's res2 3x3 layer, batch 1: 64 channels of 56 x 56, a 3 x 3 kernel, 64
// output channels.
void BM_Conv2dRes2(benchmark::State& state, bp::Device device) {
  const bp::Tensor input = bp::randn({1, 64, 56, 56}).to(device);
  const bp::Tensor weight = bp::randn({64, 64, 3, 3}).to(device);
  wait_for(bp::conv2d(input, weight, std::nullopt, {1, 1}, {1, 1}));
  for (auto _ : state) wait_for(bp::conv2d(input, weight, std::nullopt, {1, 1}, {1, 1}));
  const double flops = 2.0 * 64 * 56 * 56 * 64 * 9;
  state.counters["GFLOP/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * flops / 1e9, benchmark::Counter::kIsRate);
}

// Group kernels over a 2048 x 2048 Float matrix: softmax over rows and over columns, layer norm
// (with weight and bias) and RMS norm (with weight) over rows (two or three reads of each
// group), sums over rows and over columns (one), and a sum of everything (one group of 4M
// members); bytes count one read of the input and one write of the output.
enum class GroupKernel {
  SoftmaxRows,
  SoftmaxColumns,
  LayerNormRows,
  RmsNormRows,
  SumRows,
  SumColumns,
  SumAll
};

constexpr std::pair<GroupKernel, const char*> kGroupKernels[] = {
    {GroupKernel::SoftmaxRows, "softmax rows 2048^2 Float/"},
    {GroupKernel::SoftmaxColumns, "softmax columns 2048^2 Float/"},
    {GroupKernel::LayerNormRows, "layer norm rows 2048^2 Float/"},
    {GroupKernel::RmsNormRows, "rms norm rows 2048^2 Float/"},
    {GroupKernel::SumRows, "sum rows 2048^2 Float/"},
    {GroupKernel::SumColumns, "sum columns 2048^2 Float/"},
    {GroupKernel::SumAll, "sum all 2048^2 Float/"},
};

void BM_GroupKernel(benchmark::State& state, bp::Device device, GroupKernel kernel) {
  const int64_t n = 2048;
  const bp::Tensor x = bp::randn({n, n}).to(device);
  const bool same_shape =
      kernel == GroupKernel::SoftmaxRows || kernel == GroupKernel::SoftmaxColumns ||
      kernel == GroupKernel::LayerNormRows || kernel == GroupKernel::RmsNormRows;
  const bp::Tensor weight = bp::randn({n}).to(device), bias = bp::randn({n}).to(device);
  bp::Tensor mean = bp::empty({n, 1}, bp::kFloat32, device),
             rstd = bp::empty({n, 1}, bp::kFloat32, device);
  const std::vector<int64_t> out_shape = same_shape ? std::vector<int64_t>{n, n}
                                         : kernel == GroupKernel::SumAll ? std::vector<int64_t>{}
                                                                         : std::vector<int64_t>{n};
  bp::Tensor out = bp::empty(out_shape, bp::kFloat32, device);
  const auto run = [&] {
    switch (kernel) {
      case GroupKernel::SoftmaxRows: bp::softmax_out(out, x, 1); break;
      case GroupKernel::SoftmaxColumns: bp::softmax_out(out, x, 0); break;
      case GroupKernel::LayerNormRows:
        bp::native_layer_norm_out(out, mean, rstd, x, {n}, weight, bias, 1e-5);
        break;
      case GroupKernel::RmsNormRows: bp::rms_norm_out(out, x, {n}, weight, 1e-6); break;
      case GroupKernel::SumRows: bp::sum_out(out, x, {1}); break;
      case GroupKernel::SumColumns: bp::sum_out(out, x, {0}); break;
      case GroupKernel::SumAll: bp::sum_out(out, x, {0, 1}); break;
    }
    wait_for(out);
  };
  run();
  for (auto _ : state) run();
  const int64_t bytes = (x.numel() + out.numel()) * static_cast<int64_t>(sizeof(float));
  state.SetBytesProcessed(state.iterations() * bytes);
}

// Elementwise ops over a 4096 x 4096 Float matrix x whose operands are not all dense, so that
// they take the backend's strided path. Bytes count each operand's distinct elements once.
enum class Strided {
  AddRow,          // x + a row of 4096, broadcast down the columns (a bias)
  AddColumn,       // x + a column of 4096, broadcast along the rows
  WhereColumn,     // where(a Bool column, x, y)
  CopyTransposed,  // x transposed, copied into a contiguous matrix
  ExpTransposed    // exp of x transposed, into a contiguous matrix
};

void BM_Strided(benchmark::State& state, bp::Device device, Strided op) {
  const int64_t n = 4096;
  const bp::Tensor x = bp::randn({n, n}).to(device), y = bp::randn({n, n}).to(device);
  const bp::Tensor row = bp::randn({n}).to(device), column = bp::randn({n, 1}).to(device);
  const bp::Tensor condition = bp::gt(bp::randn({n, 1}), 0.0).to(device);
  bp::Tensor out = bp::empty({n, n}, bp::kFloat32, device);
  const auto run = [&] {
    switch (op) {
      case Strided::AddRow: bp::add_out(out, x, row); break;
      case Strided::AddColumn: bp::add_out(out, x, column); break;
      case Strided::WhereColumn: bp::where_out(out, condition, x, y); break;
      case Strided::CopyTransposed: out.copy_(x.transpose(0, 1)); break;
      case Strided::ExpTransposed: bp::exp_out(out, x.transpose(0, 1)); break;
    }
    wait_for(out);
  };
  run();
  for (auto _ : state) run();
  const int64_t matrices = op == Strided::WhereColumn ? 3 : 2;
  state.SetBytesProcessed(state.iterations() * matrices * n * n *
                          static_cast<int64_t>(sizeof(float)));
}

constexpr std::pair<Strided, const char*> kStridedOps[] = {
    {Strided::AddRow, "strided/add row 4096^2 Float/"},
    {Strided::AddColumn, "strided/add column 4096^2 Float/"},
    {Strided::WhereColumn, "strided/where column 4096^2 Float/"},
    {Strided::CopyTransposed, "strided/copy transposed 4096^2 Float/"},
    {Strided::ExpTransposed, "strided/exp transposed 4096^2 Float/"},
};

// scaled_dot_product_attention of 8 heads of 1024 positions, head dim 64: without a mask it
// takes the fused kernel; with an all-true Bool mask, the same attention takes the composite
// path (matmul, softmax, matmul).
void BM_Attention(benchmark::State& state, bp::Device device, bool fused) {
  const int64_t heads = 8, positions = 1024, head_dim = 64;
  const auto input = [&] { return bp::randn({1, heads, positions, head_dim}).to(device); };
  const bp::Tensor q = input(), k = input(), v = input();
  const std::optional<bp::Tensor> mask =
      fused
          ? std::nullopt
          : std::optional<bp::Tensor>(bp::full({positions, positions}, true, bp::kBool).to(device));
  wait_for(bp::scaled_dot_product_attention(q, k, v, mask));
  for (auto _ : state) wait_for(bp::scaled_dot_product_attention(q, k, v, mask));
  const double flops = 4.0 * heads * positions * positions * head_dim;  // two products
  state.counters["GFLOP/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * flops / 1e9, benchmark::Counter::kIsRate);
}

// Runs this program as `--first-kernel device` with `environment` added; returns seconds from
// spawn to exit.
double time_child(const std::string& self, const std::string& device,
                  const std::vector<std::string>& environment) {
  std::vector<std::string> variables = environment;
  for (char** v = environ; *v != nullptr; ++v) variables.emplace_back(*v);
  std::vector<char*> envp;
  for (std::string& v : variables) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string flag = "--first-kernel";
  std::string device_arg = device;
  std::string program = self;
  char* argv[] = {program.data(), flag.data(), device_arg.data(), nullptr};
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? seconds : -1;
}

// The child: a fill and an add on `device`, read back.
int first_kernel(const char* device) {
  const bp::Tensor x = bp::ones({1024}, bp::kFloat32, bp::Device(device));
  const float result = bp::add(x, x).cpu().to_vector<float>()[0];
  return result == 2.0f ? 0 : 1;
}

enum class Caches {
  Cold,      // ours and the driver's own (PoCL's kernel cache) empty
  OursWarm,  // ours filled by an untimed child, the driver's emptied again
  Warm,      // both filled by an untimed child
};

void BM_FirstKernel(benchmark::State& state, std::string self, std::string device, Caches caches) {
  const std::filesystem::path root = std::filesystem::temp_directory_path() /
                                     ("backplane-opencl-bench-" + std::to_string(getpid()));
  for (auto _ : state) {
    std::filesystem::remove_all(root);
    const std::vector<std::string> environment = {
        "BACKPLANE_OPENCL_CACHE_DIR=" + (root / "backplane").string(),
        "POCL_CACHE_DIR=" + (root / "pocl").string(), "BACKPLANE_BACKENDS=opencl"};
    if (caches != Caches::Cold && time_child(self, device, environment) < 0) {
      state.SkipWithError("the child failed");
    }
    if (caches == Caches::OursWarm) std::filesystem::remove_all(root / "pocl");
    const double seconds = time_child(self, device, environment);
    if (seconds < 0) state.SkipWithError("the child failed");
    state.SetIterationTime(seconds);
  }
  std::filesystem::remove_all(root);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--first-kernel") == 0) return first_kernel(argv[2]);
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();

  benchmark::RegisterBenchmark("add 16M Float/cpu", BM_Add16M, bp::Device::cpu())->UseRealTime();
  benchmark::RegisterBenchmark("mm 1024^3 Float/cpu", BM_Mm1024, bp::Device::cpu())->UseRealTime();
  benchmark::RegisterBenchmark("conv2d res2 3x3 Float/cpu", BM_Conv2dRes2, bp::Device::cpu())
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  for (const auto& [kernel, label] : kGroupKernels) {
    benchmark::RegisterBenchmark((label + std::string("cpu")).c_str(), BM_GroupKernel,
                                 bp::Device::cpu(), kernel)
        ->UseRealTime();
  }
  for (const auto& [op, label] : kStridedOps) {
    benchmark::RegisterBenchmark((label + std::string("cpu")).c_str(), BM_Strided,
                                 bp::Device::cpu(), op)
        ->UseRealTime();
  }
  for (const bp::Device& device : bp::devices()) {
    if (device.type_name() != "opencl") continue;
    const std::string name = device.str();
    for (const auto& [op, label] : kStridedOps) {
      benchmark::RegisterBenchmark((label + name).c_str(), BM_Strided, device, op)->UseRealTime();
    }
    benchmark::RegisterBenchmark(("add 16M Float/" + name).c_str(), BM_Add16M, device)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("mm 1024^3 Float/" + name).c_str(), BM_Mm1024, device)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("conv2d res2 3x3 Float/" + name).c_str(), BM_Conv2dRes2, device)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    for (const auto& [kernel, label] : kGroupKernels) {
      benchmark::RegisterBenchmark((label + name).c_str(), BM_GroupKernel, device, kernel)
          ->UseRealTime();
    }
    for (const bool fused : {true, false}) {
      benchmark::RegisterBenchmark(
          ("attention h8 seq 1024 dim 64 Float/" + name + (fused ? "/fused" : "/composite"))
              .c_str(),
          BM_Attention, device, fused)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    for (const auto& [caches, label] :
         {std::pair{Caches::Cold, "cold caches"},
          std::pair{Caches::OursWarm, "warm program cache, cold driver cache"},
          std::pair{Caches::Warm, "warm caches"}}) {
      benchmark::RegisterBenchmark(("process start to first kernel/" + name + "/" + label).c_str(),
                                   BM_FirstKernel, self, name, caches)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(3);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
