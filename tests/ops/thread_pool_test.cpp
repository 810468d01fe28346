// The cpu backend's thread pool, seen through the public API: kernels on tensors large enough
// to be split across threads give exactly the results of the single-threaded loop, in every
// layout, also when several user threads call at once. (tests/cpu_thread_pool tests the pool
// itself; tests/CMakeLists.txt runs the first case here with BACKPLANE_NUM_THREADS=2 under a
// short timeout, which a process hanging at exit would exceed.) The row reductions,
// normalisations and GELU also give the same bits in processes on 1 and on 2 threads.
#include "child_process.h"
#include "op_test_support.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace optest {
namespace {

// 72,000 elements: above the cpu backend's parallel threshold (32K) as a whole, while each of
// the 4 slices along dim 0 is below it.
const Shape kLargeShape = {4, 24, 750};
constexpr int64_t kSlices = 4;

using TensorOp = std::function<Tensor(const std::vector<Tensor>&)>;

// `op` applied to each slice along dim 0 of `inputs` and the results concatenated: every call
// is small enough for the single-threaded loop.
Tensor slice_by_slice(const TensorOp& op, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> results;
  for (int64_t i = 0; i < kSlices; ++i) {
    std::vector<Tensor> slices;
    for (const Tensor& input : inputs) slices.push_back(input.slice(0, i, i + 1));
    results.push_back(op(slices));
  }
  return bp::cat(results, 0);
}

// Same shape, dtype and bits (NaN matching NaN).
void check_identical(const Tensor& actual, const Tensor& expected) {
  REQUIRE(shape_of(actual) == shape_of(expected));
  REQUIRE(actual.dtype() == expected.dtype());
  const Values a = values_of(actual);
  const Values e = values_of(expected);
  size_t mismatches = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != e[i] && !(std::isnan(a[i]) && std::isnan(e[i]))) ++mismatches;
  }
  CHECK(mismatches == 0);
}

// `op` on whole tensors of kLargeShape in each layout against slice_by_slice.
void check_large_op(const std::string& name, const std::vector<DType>& dtypes, size_t arity,
                    const TensorOp& op) {
  for (const DType dtype : dtypes) {
    for (const Layout layout : kAllLayouts) {
      CAPTURE(name);
      CAPTURE(name_of(dtype));
      CAPTURE(name_of(layout));
      std::vector<Tensor> inputs;
      for (size_t k = 0; k < arity; ++k) {
        // The second input stays contiguous, so that operands' layouts differ too.
        inputs.push_back(sample_tensor(kLargeShape, dtype, k == 1 ? Layout::Contiguous : layout,
                                       /*seed=*/k + 1));
      }
      check_identical(op(inputs), slice_by_slice(op, inputs));
    }
  }
}

const std::vector<DType> kElementwiseDtypes = {bp::kFloat32, bp::kFloat16, bp::kInt32};
const std::vector<DType> kFloatDtypes = {bp::kFloat32, bp::kBFloat16};

TEST_CASE("thread pool: large elementwise ops match the single-threaded loop in every layout") {
  check_large_op("add", kElementwiseDtypes, 2,
                 [](const std::vector<Tensor>& t) { return bp::add(t[0], t[1], 3); });
  check_large_op("mul", kElementwiseDtypes, 2,
                 [](const std::vector<Tensor>& t) { return bp::mul(t[0], t[1]); });
  check_large_op("div", kFloatDtypes, 2,
                 [](const std::vector<Tensor>& t) { return bp::div(t[0], t[1]); });
  check_large_op("relu", kElementwiseDtypes, 1,
                 [](const std::vector<Tensor>& t) { return bp::relu(t[0]); });
  check_large_op("exp", kFloatDtypes, 1,
                 [](const std::vector<Tensor>& t) { return bp::exp(t[0]); });
  check_large_op("gelu(tanh)", kFloatDtypes, 1,
                 [](const std::vector<Tensor>& t) { return bp::gelu(t[0], "tanh"); });
  check_large_op("gt", kElementwiseDtypes, 2,
                 [](const std::vector<Tensor>& t) { return bp::gt(t[0], t[1]); });
  check_large_op("where", kElementwiseDtypes, 2, [](const std::vector<Tensor>& t) {
    return bp::where(bp::gt(t[0], 0), t[0], t[1]);
  });
  check_large_op("contiguous (copy_)", kElementwiseDtypes, 1,
                 [](const std::vector<Tensor>& t) { return t[0].contiguous(); });
  check_large_op("to(Float64) (converting copy_)", kElementwiseDtypes, 1,
                 [](const std::vector<Tensor>& t) {
                   Tensor out = bp::empty(t[0].sizes(), bp::kFloat64);
                   out.copy_(t[0]);
                   return out;
                 });
}

TEST_CASE("thread pool: large writes into non-contiguous outputs reach every element") {
  for (const Layout layout : kWritableLayouts) {
    CAPTURE(name_of(layout));
    const Tensor a = sample_tensor(kLargeShape, bp::kFloat32, Layout::Contiguous, 1);
    const Tensor b = sample_tensor(kLargeShape, bp::kFloat32, Layout::Transposed, 2);
    Tensor out = empty_tensor(kLargeShape, bp::kFloat32, layout);
    bp::add_out(out, a, b);
    check_tensor(out, kLargeShape, bp::kFloat32, [&] {
      Values sum = values_of(a);
      const Values other = values_of(b);
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += other[i];
      return sum;
    }());

    out.fill_(2.5);
    check_tensor(out, kLargeShape, bp::kFloat32,
                 Values(static_cast<size_t>(numel_of(kLargeShape)), 2.5));
  }
}

// Layer norm over kLargeShape's last dim: (out, mean, rstd).
std::tuple<Tensor, Tensor, Tensor> layer_norm_750(const Tensor& x) {
  return bp::native_layer_norm(x, IntArrayRef(Shape{750}), std::nullopt, std::nullopt, 1e-5);
}

TEST_CASE("thread pool: large reductions and normalisations match the single-threaded loop") {
  for (const Layout layout : kAllLayouts) {
    CAPTURE(name_of(layout));
    const Tensor x = sample_tensor(kLargeShape, bp::kFloat32, layout, 7);
    // Sums of multiples of 1/8 are exact, so a reference loop in double must agree exactly.
    const Shape dims = {1};
    const std::vector<bool> reduced = {false, true, false};
    check_tensor(bp::sum(x, IntArrayRef(dims)), reduced_shape(kLargeShape, reduced, false),
                 bp::kFloat32,
                 reduce_groups(values_of(x), kLargeShape, reduced, [](const Values& g) {
                   double total = 0;
                   for (const double v : g) total += v;
                   return total;
                 }));
    const TensorOp ops[] = {
        [](const std::vector<Tensor>& t) { return bp::sum(t[0], IntArrayRef(Shape{2})); },
        [](const std::vector<Tensor>& t) { return bp::argmax(t[0], -1); },
        [](const std::vector<Tensor>& t) { return bp::softmax(t[0], -1); },
        [](const std::vector<Tensor>& t) { return bp::log_softmax(t[0], 1); },
        [](const std::vector<Tensor>& t) { return std::get<0>(layer_norm_750(t[0])); },
        [](const std::vector<Tensor>& t) { return std::get<1>(layer_norm_750(t[0])); },
        [](const std::vector<Tensor>& t) { return std::get<2>(layer_norm_750(t[0])); },
    };
    for (const TensorOp& op : ops) check_identical(op({x}), slice_by_slice(op, {x}));
  }
}

TEST_CASE("thread pool: several user threads running large kernels at once") {
  constexpr int kCallers = 4;
  const Tensor a = sample_tensor(kLargeShape, bp::kFloat32, Layout::Transposed, 1);
  const Tensor b = sample_tensor(kLargeShape, bp::kFloat32, Layout::Contiguous, 2);
  const Tensor expected =
      slice_by_slice([](const std::vector<Tensor>& t) { return bp::mul(t[0], t[1]); }, {a, b});
  std::vector<Tensor> results(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      for (int repeat = 0; repeat < 5; ++repeat) results[static_cast<size_t>(i)] = bp::mul(a, b);
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (const Tensor& result : results) check_identical(result, expected);
}

constexpr const char* kDigestFlag = "BP_OPS_TEST_PRINT_DIGESTS";
constexpr const char* kDigestCase = "thread pool: the digests of row kernel results printed";

// FNV-1a of a float32 tensor's bits.
uint64_t digest_of(const Tensor& t) {
  uint64_t hash = 14695981039346656037ull;
  for (const float value : t.contiguous().to_vector<float>()) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    for (int byte = 0; byte < 4; ++byte) {
      hash = (hash ^ ((bits >> (8 * byte)) & 0xffu)) * 1099511628211ull;
    }
  }
  return hash;
}

// Run in a child process: prints a line "digest <name> <hash>" for each op's result. Thirds of
// the samples, so that sums round and their order shows in the bits.
TEST_CASE(kDigestCase* doctest::skip(std::getenv(kDigestFlag) == nullptr)) {
  const auto thirds = [](const Shape& shape, Layout layout, uint64_t seed) {
    return bp::div(sample_tensor(shape, bp::kFloat32, layout, seed), 3.0);
  };
  const Tensor matrix = thirds({512, 4096}, Layout::Contiguous, 11);
  const Tensor rows = thirds({1024, 1024}, Layout::Contiguous, 12);
  const Tensor weight = thirds({1024}, Layout::Contiguous, 13);
  const Tensor bias = thirds({1024}, Layout::Contiguous, 14);
  const auto [normalized, mean, rstd] =
      bp::native_layer_norm(rows, IntArrayRef(Shape{1024}), weight, bias, 1e-5);
  const Tensor images = thirds({4, 64, 28, 28}, Layout::Contiguous, 15);
  const Tensor channel_mean = thirds({64}, Layout::Contiguous, 16);
  const Tensor channel_var = bp::add(bp::abs(thirds({64}, Layout::Contiguous, 17)), 0.5);
  const Tensor channel_weight = thirds({64}, Layout::Contiguous, 18);
  const Tensor channel_bias = thirds({64}, Layout::Contiguous, 19);
  const std::pair<const char*, Tensor> results[] = {
      {"sum_rows", bp::sum(matrix, IntArrayRef(Shape{1}))},
      {"mean_rows", bp::mean(matrix, IntArrayRef(Shape{1}))},
      {"layer_norm", normalized},
      {"layer_norm_mean", mean},
      {"layer_norm_rstd", rstd},
      {"batch_norm", bp::batch_norm(images, channel_weight, channel_bias, channel_mean, channel_var,
                                    false, 0.1, 1e-5, true)},
      {"batch_norm_transposed", bp::batch_norm(images.transpose(2, 3), channel_weight, channel_bias,
                                               channel_mean, channel_var, false, 0.1, 1e-5, true)},
      {"gelu", bp::gelu(thirds({1024, 1024}, Layout::Contiguous, 20))},
  };
  for (const auto& [name, result] : results) {
    std::printf("digest %s %016llx\n", name, static_cast<unsigned long long>(digest_of(result)));
  }
  std::fflush(stdout);
}

std::string own_executable() {
  std::array<char, 4096> path{};
  const ssize_t length = readlink("/proc/self/exe", path.data(), path.size() - 1);
  REQUIRE(length > 0);
  return std::string(path.data(), static_cast<size_t>(length));
}

// The digest lines of kDigestCase run in a child process on `threads` threads.
std::string digests_on(int threads) {
  const test_support::ChildResult child =
      test_support::run_child({own_executable(), std::string("--test-case=") + kDigestCase},
                              {{"BACKPLANE_BACKENDS", "cpu"},
                               {"BACKPLANE_NUM_THREADS", std::to_string(threads)},
                               {kDigestFlag, "1"}});
  INFO("child output on " << threads << " threads:\n" << child.out << child.err);
  CHECK(child.exit_code == 0);
  const std::string& output = child.out;
  std::istringstream lines(output);
  std::string digests;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("digest ", 0) == 0) digests += line + "\n";
  }
  CHECK(std::count(digests.begin(), digests.end(), '\n') == 8);
  return digests;
}

TEST_CASE(
    "thread pool: row reductions, normalisations and gelu give the same bits on 1 and 2 "
    "threads") {
  const std::string one = digests_on(1);
  const std::string two = digests_on(2);
  CHECK(one == two);
}

}  // namespace
}  // namespace optest
