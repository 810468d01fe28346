// The CUDA kernels' own paths, each against the CPU backend on the same input: 16-byte vector
// loads and their tails at any alignment, strided walks past 8 dimensions, reductions split
// across blocks and over columns, softmax and layer norm on rows that do and do not fit in
// shared memory, cuBLASLt's layouts and its bias and activation epilogues, integer products,
// conversions, and fused attention against the CPU backend's, fused and refused cases alike. The op
// conformance suite (tests/ops) covers every op and dtype on small shapes.
#include "cuda_test_support.h"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using bp::Device;
using bp::Tensor;

// fn on copies of `inputs` on the GPU and on the host, compared within `tolerance`.
void same_as_cpu(const std::vector<Tensor>& inputs,
                 const std::function<Tensor(const std::vector<Tensor>&)>& fn, double tolerance) {
  const Device gpu = cudatest::cuda_devices().front();
  std::vector<Tensor> on_gpu;
  for (const Tensor& input : inputs) on_gpu.push_back(input.to(gpu));
  const Tensor actual = fn(on_gpu);
  CHECK(actual.device() == gpu);
  cudatest::check_close(actual, fn(inputs), tolerance);
}

Tensor normal(const std::vector<int64_t>& sizes, bp::DType dtype = bp::kFloat32) {
  return bp::randn(sizes, bp::kFloat32).to(dtype);
}

// Tolerance for results computed in a 16-bit float.
double tolerance_of(bp::DType dtype) {
  return dtype == bp::kFloat32 ? 1e-5 : dtype == bp::kFloat64 ? 1e-12 : 1e-2;
}

TEST_CASE("elementwise: vector loads at every alignment, with tails, for every width") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype :
       {bp::kFloat32, bp::kFloat16, bp::kBFloat16, bp::kFloat64, bp::kInt32, bp::kInt8}) {
    const Tensor a = normal({1 << 20}, bp::kFloat32).mul(8).to(dtype);
    const Tensor b = normal({1 << 20}, bp::kFloat32).mul(8).to(dtype);
    for (const int64_t start : {0, 1, 3}) {
      INFO(bp::dtype_name(dtype) << " from element " << start);
      // Slices from `start` leave the pointers misaligned for 16-byte accesses unless start is 0.
      same_as_cpu(
          {a, b},
          [&](const std::vector<Tensor>& t) {
            return bp::add(t[0].slice(0, start, (1 << 20) - 5),
                           t[1].slice(0, 0, (1 << 20) - 5 - start), 2);
          },
          0);
      same_as_cpu(
          {a},
          [&](const std::vector<Tensor>& t) { return bp::relu(t[0].slice(0, start, 1 << 20)); }, 0);
      same_as_cpu(
          {a, b},
          [&](const std::vector<Tensor>& t) {
            return bp::lt(t[0].slice(0, start, 1 << 20), t[1].slice(0, start, 1 << 20));
          },
          0);
    }
  }
}

TEST_CASE("elementwise: transcendental functions on half types compute in float") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype : {bp::kFloat16, bp::kBFloat16, bp::kFloat32}) {
    INFO(bp::dtype_name(dtype));
    const Tensor x = normal({300001}, dtype);
    same_as_cpu(
        {x}, [](const std::vector<Tensor>& t) { return bp::gelu(t[0]); }, tolerance_of(dtype));
    same_as_cpu(
        {x}, [](const std::vector<Tensor>& t) { return bp::gelu(t[0], "tanh"); },
        tolerance_of(dtype));
    same_as_cpu(
        {x}, [](const std::vector<Tensor>& t) { return bp::sigmoid(t[0]); }, tolerance_of(dtype));
    same_as_cpu(
        {x}, [](const std::vector<Tensor>& t) { return bp::exp(t[0]); }, tolerance_of(dtype));
  }
}

TEST_CASE("elementwise: more than 8 dimensions that do not merge are walked in launches") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const Tensor x = normal({2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2});
  const std::vector<int64_t> reversed = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  same_as_cpu(
      {x}, [&](const std::vector<Tensor>& t) { return bp::mul(t[0].permute(reversed), 3); }, 0);
  same_as_cpu(
      {x}, [&](const std::vector<Tensor>& t) { return t[0].permute(reversed).contiguous(); }, 0);
}

TEST_CASE("reductions: whole tensors split across blocks, rows, columns, and the first maximum") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const Tensor big = normal({10000019});
  same_as_cpu(
      {big}, [](const std::vector<Tensor>& t) { return bp::sum(t[0]); }, 1e-4);
  same_as_cpu(
      {big}, [](const std::vector<Tensor>& t) { return bp::mean(t[0], {0}); }, 1e-4);
  same_as_cpu(
      {big}, [](const std::vector<Tensor>& t) { return bp::argmax(t[0]); }, 0);
  same_as_cpu(
      {big}, [](const std::vector<Tensor>& t) { return bp::amax(t[0], {}); }, 0);
  const Tensor matrix = normal({3001, 517});
  for (const int64_t dim : {0, 1}) {
    INFO("dim " << dim);
    same_as_cpu(
        {matrix}, [&](const std::vector<Tensor>& t) { return bp::sum(t[0], {dim}); }, 1e-4);
    same_as_cpu(
        {matrix}, [&](const std::vector<Tensor>& t) { return std::get<1>(bp::max(t[0], dim)); }, 0);
    same_as_cpu(
        {matrix},
        [&](const std::vector<Tensor>& t) { return bp::sum(t[0].transpose(0, 1), {dim}); }, 1e-4);
  }
  // Few long columns: the column layout split across blocks.
  same_as_cpu(
      {normal({1000003, 3})}, [](const std::vector<Tensor>& t) { return bp::sum(t[0], {0}); },
      1e-4);
  // Ties and NaN: the first maximum, NaN above everything.
  std::vector<float> values(200000, 1.0f);
  values[777] = 5.0f;
  values[150000] = 5.0f;
  same_as_cpu(
      {bp::from_vector(values, {200000})},
      [](const std::vector<Tensor>& t) { return bp::argmax(t[0]); }, 0);
  values[123456] = std::numeric_limits<float>::quiet_NaN();
  values[190000] = std::numeric_limits<float>::quiet_NaN();
  same_as_cpu(
      {bp::from_vector(values, {200000})},
      [](const std::vector<Tensor>& t) { return bp::argmax(t[0]); }, 0);
  // Integers and Bool accumulate in int64.
  same_as_cpu(
      {normal({1 << 20}).mul(100).to(bp::kInt32)},
      [](const std::vector<Tensor>& t) { return bp::sum(t[0], {}, false, bp::kInt64); }, 0);
  same_as_cpu(
      {bp::gt(normal({1 << 20}), 0)}, [](const std::vector<Tensor>& t) { return bp::sum(t[0]); },
      0);
}

TEST_CASE("softmax and log_softmax: rows kept in shared memory, longer rows online, and columns") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype : {bp::kFloat32, bp::kBFloat16}) {
    INFO(bp::dtype_name(dtype));
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{64, 8192}, {3, 100003}, {5000, 33}}) {
      INFO("rows of " << shape[1]);
      const Tensor x = normal(shape, dtype).mul(4);
      same_as_cpu(
          {x}, [](const std::vector<Tensor>& t) { return bp::softmax(t[0], 1); },
          tolerance_of(dtype));
      same_as_cpu(
          {x}, [](const std::vector<Tensor>& t) { return bp::log_softmax(t[0], -1); },
          tolerance_of(dtype));
    }
    same_as_cpu(
        {normal({1000, 64}, dtype)},
        [](const std::vector<Tensor>& t) { return bp::softmax(t[0], 0); }, tolerance_of(dtype));
  }
  // Infinities and NaN follow the CPU backend's arithmetic.
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor special =
      bp::from_vector(std::vector<float>{-inf, 1, 2, -inf, -inf, -inf, inf, 1, 0,
                                         std::numeric_limits<float>::quiet_NaN(), 1, 2},
                      {4, 3});
  same_as_cpu(
      {special}, [](const std::vector<Tensor>& t) { return bp::softmax(t[0], 1); }, 1e-6);
  same_as_cpu(
      {special}, [](const std::vector<Tensor>& t) { return bp::log_softmax(t[0], 1); }, 1e-6);
}

TEST_CASE("layer norm: rows kept in shared memory, longer rows read twice, strided input") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype : {bp::kFloat32, bp::kFloat16}) {
    for (const int64_t width : {int64_t{1024}, int64_t{100000}}) {
      INFO(bp::dtype_name(dtype) << ", rows of " << width);
      const Tensor x = normal({16, width}, dtype).add(3);
      const Tensor weight = normal({width}, dtype), bias = normal({width}, dtype);
      same_as_cpu(
          {x, weight, bias},
          [&](const std::vector<Tensor>& t) {
            auto [out, mean, rstd] = bp::native_layer_norm(t[0], {width}, t[1], t[2], 1e-5);
            return bp::cat({out.flatten(), mean.flatten(), rstd.flatten()});
          },
          dtype == bp::kFloat32 ? 1e-4 : 1e-2);
    }
  }
  const Tensor x = normal({257, 300});
  same_as_cpu(
      {x},
      [](const std::vector<Tensor>& t) {
        auto [out, mean, rstd] =
            bp::native_layer_norm(t[0].transpose(0, 1), {257}, std::nullopt, std::nullopt, 1e-5);
        return bp::cat({out.flatten(), mean.flatten(), rstd.flatten()});
      },
      1e-4);
}

TEST_CASE(
    "row kernels whose row cache reaches the 48 KB every kernel may use beside its static shared "
    "memory") {
  SKIP_WITHOUT_CUDA_DEVICE();
  // One row of 48 KB exactly, and one just under: with the kernels' own __shared__ arrays the
  // block needs more than 48 KB, which it may use only after opting in.
  for (const bp::DType dtype : {bp::kFloat32, bp::kFloat16, bp::kFloat64}) {
    const int64_t full_row = int64_t{48 * 1024} / static_cast<int64_t>(bp::element_size(dtype));
    for (const int64_t width : {full_row, full_row - 20}) {
      INFO(bp::dtype_name(dtype) << ", rows of " << width);
      const Tensor x = normal({3, width}, dtype);
      const Tensor weight = normal({width}, dtype), bias = normal({width}, dtype);
      const double tolerance = dtype == bp::kFloat32 ? 1e-4 : tolerance_of(dtype);
      same_as_cpu(
          {x}, [](const std::vector<Tensor>& t) { return bp::softmax(t[0], 1); }, tolerance);
      same_as_cpu(
          {x, weight, bias},
          [&](const std::vector<Tensor>& t) {
            return std::get<0>(bp::native_layer_norm(t[0], {width}, t[1], t[2], 1e-5));
          },
          tolerance);
      same_as_cpu(
          {x, weight},
          [&](const std::vector<Tensor>& t) { return bp::rms_norm(t[0], {width}, t[1], 1e-5); },
          tolerance);
    }
  }
}

TEST_CASE("row kernels holding rows in registers: every team width, and the rows they refuse") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype : {bp::kFloat32, bp::kFloat16, bp::kBFloat16, bp::kFloat64}) {
    const double tolerance = dtype == bp::kFloat32 ? 1e-4 : tolerance_of(dtype);
    // Rows for a warp, for teams of 64 to 512 threads, past the longest a team holds (16384
    // float32 and float64 members, 32768 16-bit ones), and not whole 16-byte vectors.
    for (const auto& [rows, width] : {std::pair<int64_t, int64_t>{77, 64},
                                      {1001, 256},
                                      {33, 1000},
                                      {9, 4096},
                                      {5, 8192},
                                      {3, 16384},
                                      {3, 32768},
                                      {41, 1001}}) {
      INFO(bp::dtype_name(dtype) << ", " << rows << " rows of " << width);
      const Tensor x = normal({rows, width + 1}, dtype).mul(3).add(1);
      const Tensor weight = normal({width}, dtype), bias = normal({width}, dtype);
      // Dense rows from the start of the buffer, rows one element past a 16-byte boundary, and
      // rows of members one row apart.
      const std::vector<std::function<Tensor(const Tensor&)>> layouts = {
          [&](const Tensor& t) { return t.slice(1, 0, width).contiguous(); },
          [&](const Tensor& t) { return t.slice(1, 1, width + 1); },
          [&](const Tensor& t) {
            return t.slice(1, 0, width).transpose(0, 1).contiguous().transpose(0, 1);
          }};
      for (const auto& layout : layouts) {
        same_as_cpu(
            {x}, [&](const std::vector<Tensor>& t) { return bp::softmax(layout(t[0]), 1); },
            tolerance);
        same_as_cpu(
            {x}, [&](const std::vector<Tensor>& t) { return bp::log_softmax(layout(t[0]), 1); },
            tolerance);
        same_as_cpu(
            {x, weight, bias},
            [&](const std::vector<Tensor>& t) {
              auto [out, mean, rstd] =
                  bp::native_layer_norm(layout(t[0]), {width}, t[1], t[2], 1e-5);
              return bp::cat({out.flatten(), mean.flatten(), rstd.flatten()});
            },
            tolerance);
        same_as_cpu(
            {x, weight},
            [&](const std::vector<Tensor>& t) {
              return bp::add(bp::rms_norm(layout(t[0]), {width}, t[1], 1e-5),
                             bp::rms_norm(layout(t[0]), {width}, std::nullopt, 1e-5));
            },
            tolerance);
      }
    }
  }
  // The same input, twice: the same bits.
  const Tensor x = normal({1000, 4096}, bp::kBFloat16).to(cudatest::cuda_devices().front());
  cudatest::check_close(bp::softmax(x, 1), bp::softmax(x, 1), 0);
  cudatest::check_close(bp::layer_norm(x, {4096}), bp::layer_norm(x, {4096}), 0);
}

TEST_CASE("sums over many long 16-bit rows, a warp a row, and over few") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype : {bp::kBFloat16, bp::kFloat16}) {
    // Enough rows for a warp each on any GPU of up to 256 multiprocessors, and few rows.
    for (const auto& [rows, width] :
         {std::pair<int64_t, int64_t>{8193, 1024}, {9000, 2056}, {8200, 1031}, {7, 8192}}) {
      INFO(bp::dtype_name(dtype) << ", " << rows << " rows of " << width);
      const Tensor x = normal({rows, width + 1}, dtype);
      for (const int64_t start : {0, 1}) {
        same_as_cpu(
            {x},
            [&](const std::vector<Tensor>& t) {
              return bp::sum(t[0].slice(1, start, start + width), {1});
            },
            tolerance_of(dtype));
        same_as_cpu(
            {x},
            [&](const std::vector<Tensor>& t) {
              return bp::mean(t[0].slice(1, start, start + width), {1});
            },
            tolerance_of(dtype));
      }
    }
  }
}

TEST_CASE("addmm with a bias row that does not start on 16 bytes takes the addend path") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype : {bp::kFloat32, bp::kFloat16, bp::kBFloat16}) {
    INFO(bp::dtype_name(dtype));
    const Tensor a = normal({128, 64}, dtype), b = normal({64, 96}, dtype),
                 buffer = normal({97}, dtype);
    same_as_cpu(
        {buffer, a, b},
        [](const std::vector<Tensor>& t) {
          return bp::addmm(t[0].slice(0, 1, 97), t[1], t[2]);  // the bias starts one element in
        },
        dtype == bp::kFloat32 ? 1e-4 : tolerance_of(dtype));
  }
}

TEST_CASE("matrix products: every layout, the bias epilogue, addends, batches, integers") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype : {bp::kFloat32, bp::kFloat64, bp::kFloat16, bp::kBFloat16}) {
    INFO(bp::dtype_name(dtype));
    const double tolerance = dtype == bp::kFloat32 ? 1e-4 : tolerance_of(dtype);
    const Tensor a = normal({130, 70}, dtype), b = normal({70, 90}, dtype),
                 bias = normal({90}, dtype);
    same_as_cpu(
        {a, b}, [](const std::vector<Tensor>& t) { return bp::mm(t[0], t[1]); }, tolerance);
    same_as_cpu(
        {a, b},
        [](const std::vector<Tensor>& t) {
          return bp::mm(t[1].transpose(0, 1), t[0].transpose(0, 1));
        },
        tolerance);
    // Every other column: no unit stride, copied to dense scratch first.
    same_as_cpu(
        {a, b},
        [](const std::vector<Tensor>& t) {
          return bp::mm(t[0].slice(1, 0, 70, 2), t[1].slice(0, 0, 70, 2));
        },
        tolerance);
    // Into a column-major output.
    same_as_cpu(
        {a, b},
        [](const std::vector<Tensor>& t) {
          Tensor out = bp::empty({90, 130}, t[0].dtype(), t[0].device()).transpose(0, 1);
          bp::mm_out(out, t[0], t[1]);
          return out;
        },
        tolerance);
    same_as_cpu(
        {bias, a, b}, [](const std::vector<Tensor>& t) { return bp::addmm(t[0], t[1], t[2]); },
        tolerance);
    same_as_cpu(
        {bias, a, b},
        [](const std::vector<Tensor>& t) { return bp::addmm(t[0], t[1], t[2], 1, 3); }, tolerance);
    same_as_cpu(
        {normal({130, 90}, dtype), a, b},
        [](const std::vector<Tensor>& t) { return bp::addmm(t[0], t[1], t[2], 0.5, 2); },
        tolerance);
    same_as_cpu(
        {normal({130, 1}, dtype), a, b},
        [](const std::vector<Tensor>& t) { return bp::addmm(t[0], t[1], t[2]); }, tolerance);
    const Tensor batch_a = normal({5, 33, 17}, dtype), batch_b = normal({1, 17, 20}, dtype);
    same_as_cpu(
        {batch_a, batch_b},
        [](const std::vector<Tensor>& t) {
          return bp::bmm(t[0], t[1].expand({5, 17, 20}));  // the same matrix for every batch
        },
        tolerance);
    same_as_cpu(
        {batch_a, batch_b},
        [](const std::vector<Tensor>& t) {
          return bp::bmm(t[0].transpose(1, 2).transpose(1, 2),
                         t[1].expand({5, 17, 20}).contiguous());
        },
        tolerance);
  }
  for (const bp::DType dtype : {bp::kInt8, bp::kUInt8, bp::kInt32, bp::kInt64}) {
    INFO(bp::dtype_name(dtype));
    const Tensor a = normal({70, 45}).mul(50).to(dtype), b = normal({45, 33}).mul(50).to(dtype);
    same_as_cpu(
        {a, b}, [](const std::vector<Tensor>& t) { return bp::mm(t[0], t[1]); }, 0);
    same_as_cpu(
        {normal({33}).mul(9).to(dtype), a, b},
        [](const std::vector<Tensor>& t) { return bp::addmm(t[0], t[1], t[2], 2, 3); }, 0);
  }
}

TEST_CASE("copies convert between every pair of dtypes, dense and strided") {
  SKIP_WITHOUT_CUDA_DEVICE();
  // 0 to 107.2 in steps of 0.1: every dtype holds them without overflow, so that conversions
  // to integers are defined (a negative float converted to Byte is not, in C++).
  const Tensor source = bp::arange(0, 37 * 29, 1, bp::kFloat32).mul(0.1).view({37, 29});
  for (const bp::DType from : bp::kAllDTypes) {
    for (const bp::DType to : bp::kAllDTypes) {
      INFO(bp::dtype_name(from) << " -> " << bp::dtype_name(to));
      const Tensor x = source.to(from);
      same_as_cpu(
          {x}, [&](const std::vector<Tensor>& t) { return t[0].to(to); }, 0);
      same_as_cpu(
          {x}, [&](const std::vector<Tensor>& t) { return t[0].transpose(0, 1).to(to); }, 0);
    }
  }
  same_as_cpu(
      {normal({1000, 3}), normal({1000, 5}).to(bp::kBFloat16)},
      [](const std::vector<Tensor>& t) {
        return bp::cat({t[0], t[1]}, 1);
      },
      0);
}

TEST_CASE("kernels index tensors of 2^32 elements and more with 64-bit arithmetic") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const Device gpu = cudatest::cuda_devices().front();
  const int64_t rows = (int64_t{1} << 16) + 1, cols = (int64_t{1} << 16) + 3;  // 2^32 + 2^18 + 3
  Tensor bytes = bp::zeros({rows, cols}, bp::kUInt8, gpu);
  Tensor transposed = bytes.transpose(0, 1);
  transposed.fill_(1);  // a strided walk past 2^32 elements
  transposed.select(0, cols - 1).fill_(2);
  // Byte reductions keep their dtype (sum would widen the whole tensor to Long first).
  CHECK(bp::amax(bytes, {}).item<uint8_t>() == 2);
  CHECK(bp::argmax(bytes.flatten()).item<int64_t>() == cols - 1);
  // A strided copy past 2^32 elements: the 2s are the last row of the transposed copy.
  const Tensor copied = transposed.contiguous();
  CHECK(bp::argmax(copied.flatten()).item<int64_t>() == (cols - 1) * rows);
  CHECK(bp::amax(copied.slice(0, 0, cols - 1), {}).item<uint8_t>() == 1);
}

// The cuda plugin's counter "cuda0.conv2d.<name>".
uint64_t conv_counter(const std::string& name) {
  for (const bp::BackendCounter& counter : bp::backend_counters("cuda")) {
    if (counter.name == "cuda0.conv2d." + name) return counter.value;
  }
  FAIL("the cuda plugin reports no counter cuda0.conv2d." << name);
  return 0;
}

TEST_CASE("conv2d through cuDNN, or the implicit-GEMM kernel with BACKPLANE_CUDA_CUDNN=0") {
  SKIP_WITHOUT_CUDA_DEVICE();
  // CTest runs this case once more with BACKPLANE_CUDA_CONV_LAYOUT=nhwc: then every problem
  // whose planes are dense runs on NHWC copies wherever cuDNN has an NHWC algorithm for it.
  const char* layout = std::getenv("BACKPLANE_CUDA_CONV_LAYOUT");
  const bool channels_last = layout != nullptr && std::string(layout) == "nhwc";
  struct Case {
    std::vector<int64_t> input, weight;
    std::vector<int64_t> stride, padding, dilation;
    int64_t groups;
  };
  const std::vector<Case> cases = {
      {{2, 3, 17, 19}, {8, 3, 3, 3}, {1}, {1}, {1}, 1},
      {{1, 8, 32, 32}, {16, 4, 5, 3}, {2, 1}, {2, 0}, {1, 2}, 2},
      {{3, 6, 9, 9}, {6, 1, 3, 3}, {1}, {0}, {2}, 6},  // depthwise
      {{1, 64, 14, 14}, {128, 64, 1, 1}, {2}, {0}, {1}, 1},
      // Past a whole tile of the implicit-GEMM kernel in pixels (286), taps (45) and channels.
      {{2, 5, 11, 13}, {70, 5, 3, 3}, {1}, {1}, {1}, 1},
      // Channels in multiples of 8, which cuDNN's NHWC tensor-core kernels take; planes of
      // 120, 63 and 1155 pixels, partial and whole tiles of the transposes (32 x 32).
      {{4, 16, 12, 10}, {32, 16, 3, 3}, {1}, {1}, {1}, 1},
      {{2, 32, 9, 7}, {64, 8, 3, 3}, {1}, {1}, {2}, 4},  // grouped and dilated
      {{3, 8, 33, 35}, {24, 8, 1, 1}, {1}, {0}, {1}, 1},
  };
  for (const bp::DType dtype : {bp::kFloat32, bp::kFloat64, bp::kFloat16, bp::kBFloat16}) {
    for (const Case& c : cases) {
      INFO(bp::dtype_name(dtype) << " input " << c.input[1] << "x" << c.input[2] << "x"
                                 << c.input[3] << " groups " << c.groups);
      const Tensor input = normal(c.input, dtype), weight = normal(c.weight, dtype),
                   bias = normal({c.weight[0]}, dtype);
      const double tolerance = dtype == bp::kFloat32 ? 1e-4 : tolerance_of(dtype);
      const uint64_t cudnn_runs = conv_counter("cudnn_runs");
      same_as_cpu(
          {input, weight, bias},
          [&](const std::vector<Tensor>& t) {
            return bp::conv2d(t[0], t[1], t[2], c.stride, c.padding, c.dilation, c.groups);
          },
          tolerance);
      // Float16 with channels in multiples of 8 and no groups: cuDNN has NHWC tensor-core
      // kernels for it, so the channels-last formulation must have run, where cuDNN ran at all.
      if (channels_last && dtype == bp::kFloat16 && c.input[1] % 8 == 0 && c.weight[0] % 8 == 0 &&
          c.groups == 1 && conv_counter("cudnn_runs") > cudnn_runs) {
        CHECK(conv_counter("cudnn_nhwc") == 1);
      }
      same_as_cpu(
          {input, weight},
          [&](const std::vector<Tensor>& t) {
            return bp::conv2d(t[0], t[1], std::nullopt, c.stride, c.padding, c.dilation, c.groups);
          },
          tolerance);
      // Planes that are not dense (rows of W + 2), which keep the tensors as they are; then
      // batch and channels strided over dense planes, which the transposes take.
      const Tensor wide = normal({c.input[0], c.input[1] + 3, c.input[2], c.input[3] + 2}, dtype);
      same_as_cpu(
          {wide, weight, bias},
          [&](const std::vector<Tensor>& t) {
            return bp::conv2d(t[0].slice(1, 2, 2 + c.input[1]).slice(3, 0, c.input[3]), t[1], t[2],
                              c.stride, c.padding, c.dilation, c.groups);
          },
          tolerance);
      const Tensor tall = normal({c.input[0], c.input[1] + 3, c.input[2], c.input[3]}, dtype);
      same_as_cpu(
          {tall, weight, bias},
          [&](const std::vector<Tensor>& t) {
            return bp::conv2d(t[0].slice(1, 3, 3 + c.input[1]), t[1], t[2], c.stride, c.padding,
                              c.dilation, c.groups);
          },
          tolerance);
      // Strided input and weight.
      same_as_cpu(
          {input, weight},
          [&](const std::vector<Tensor>& t) {
            return bp::conv2d(
                t[0].transpose(2, 3).transpose(2, 3).contiguous().transpose(2, 3).transpose(2, 3),
                t[1].transpose(2, 3).contiguous().transpose(2, 3), std::nullopt, c.stride,
                c.padding, c.dilation, c.groups);
          },
          tolerance);
    }
  }
}

TEST_CASE("pooling: max with NaN, averages with and without the padding, adaptive windows") {
  SKIP_WITHOUT_CUDA_DEVICE();
  Tensor x = normal({2, 3, 15, 17});
  std::vector<float> with_nan = x.contiguous().to_vector<float>();
  with_nan[40] = std::numeric_limits<float>::quiet_NaN();
  x = bp::from_vector(with_nan, {2, 3, 15, 17});
  for (const bool ceil_mode : {false, true}) {
    INFO("ceil_mode " << ceil_mode);
    same_as_cpu(
        {x},
        [&](const std::vector<Tensor>& t) {
          return bp::max_pool2d(t[0], {3, 2}, {2}, {1}, {1}, ceil_mode);
        },
        0);
    same_as_cpu(
        {x},
        [&](const std::vector<Tensor>& t) {
          return bp::max_pool2d(t[0], {3}, {2}, {1}, {2}, ceil_mode);
        },
        0);
    for (const bool include_pad : {false, true}) {
      same_as_cpu(
          {x},
          [&](const std::vector<Tensor>& t) {
            return bp::avg_pool2d(t[0].transpose(2, 3), {3, 3}, {2, 2}, {1, 1}, ceil_mode,
                                  include_pad);
          },
          1e-5);
    }
  }
  same_as_cpu(
      {x},
      [](const std::vector<Tensor>& t) {
        return bp::avg_pool2d(t[0], {2}, {}, {0}, false, true, 3);
      },
      1e-5);
  for (const std::vector<int64_t>& size : {std::vector<int64_t>{1, 1}, {4, 5}, {15, 17}, {20, 7}}) {
    same_as_cpu(
        {x}, [&](const std::vector<Tensor>& t) { return bp::adaptive_avg_pool2d(t[0], size); },
        1e-5);
  }
}

TEST_CASE("batch norm, RMS norm and silu") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype : {bp::kFloat32, bp::kBFloat16}) {
    INFO(bp::dtype_name(dtype));
    const Tensor x = normal({4, 6, 5, 7}, dtype);
    const Tensor mean = normal({6}, dtype), var = bp::abs(normal({6}, dtype)),
                 weight = normal({6}, dtype), bias = normal({6}, dtype);
    same_as_cpu(
        {x, mean, var, weight, bias},
        [](const std::vector<Tensor>& t) {
          return bp::batch_norm_inference(t[0], t[3], t[4], t[1], t[2], 1e-5);
        },
        tolerance_of(dtype));
    same_as_cpu(
        {x, mean, var},
        [](const std::vector<Tensor>& t) {
          return bp::batch_norm_inference(t[0].transpose(0, 3), std::nullopt, std::nullopt,
                                          t[1].slice(0, 0, 6), t[2], 1e-3)
              .transpose(0, 3);
        },
        tolerance_of(dtype));
  }
  // The references are other ops on the host, so that they share no code with any rms_norm or
  // silu kernel.
  const Device gpu = cudatest::cuda_devices().front();
  for (const int64_t width : {int64_t{512}, int64_t{100000}}) {
    INFO("rows of " << width);
    const Tensor x = normal({8, width}), weight = normal({width});
    const Tensor expected =
        bp::mul(bp::div(x, bp::sqrt(bp::add(bp::mean(bp::mul(x, x), {1}, true), 1e-6))), weight);
    cudatest::check_close(bp::rms_norm(x.to(gpu), {width}, weight.to(gpu), 1e-6), expected, 1e-5);
    const Tensor machine_epsilon =
        bp::div(x, bp::sqrt(bp::add(bp::mean(bp::mul(x, x), {1}, true),
                                    std::numeric_limits<float>::epsilon())));
    cudatest::check_close(bp::rms_norm(x.to(gpu), {width}), machine_epsilon, 1e-5);
  }
  const Tensor x = normal({100003});
  cudatest::check_close(bp::silu(x.to(gpu)), bp::mul(x, bp::sigmoid(x)), 1e-5);
}

TEST_CASE("embedding and index_select pick rows, and refuse an index out of range") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const Tensor weight = normal({1000, 77}).to(bp::kBFloat16);
  const Tensor indices = bp::from_vector(std::vector<int64_t>{3, 999, 0, 3, 512, 7}, {2, 3});
  same_as_cpu(
      {weight, indices}, [](const std::vector<Tensor>& t) { return bp::embedding(t[0], t[1]); }, 0);
  same_as_cpu(
      {weight, indices},
      [](const std::vector<Tensor>& t) {
        return bp::embedding(t[0].transpose(0, 1).contiguous().transpose(0, 1),
                             t[1].transpose(0, 1).to(bp::kInt32));
      },
      0);
  const Tensor self = normal({5, 6, 7});
  for (const int64_t dim : {0, 1, 2, -1}) {
    INFO("dim " << dim);
    const Tensor index = bp::from_vector(std::vector<int64_t>{4, 0, 4, 2}, {4});
    same_as_cpu(
        {self, index},
        [&](const std::vector<Tensor>& t) { return bp::index_select(t[0], dim, t[1]); }, 0);
    same_as_cpu(
        {self, index},
        [&](const std::vector<Tensor>& t) {
          return bp::index_select(t[0].transpose(0, 2), dim, t[1].slice(0, 1, 3));
        },
        0);
  }
  const Device gpu = cudatest::cuda_devices().front();
  const Tensor bad = bp::from_vector(std::vector<int64_t>{1, 5, 2}, {3}).to(gpu);
  try {
    (void)bp::index_select(self.to(gpu), 0, bad);
    FAIL("no error");
  } catch (const bp::Error& e) {
    CHECK(std::string(e.what()).find("index 5 is out of range for a dimension of size 5") !=
          std::string::npos);
  }
  try {
    (void)bp::embedding(weight.to(gpu), bp::from_vector(std::vector<int64_t>{-1}, {1}).to(gpu));
    FAIL("no error");
  } catch (const bp::Error& e) {
    CHECK(std::string(e.what()).find("index -1 is out of range") != std::string::npos);
  }
  // The device keeps working.
  same_as_cpu(
      {weight, indices}, [](const std::vector<Tensor>& t) { return bp::embedding(t[0], t[1]); }, 0);
}

TEST_CASE(
    "_addmm_activation: cuBLASLt's ReLU epilogue and the plugin's GELU pass, with and without the "
    "bias") {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const bp::DType dtype : {bp::kFloat32, bp::kFloat16, bp::kBFloat16, bp::kFloat64}) {
    for (const bool use_gelu : {false, true}) {
      INFO(bp::dtype_name(dtype) << (use_gelu ? " gelu" : " relu"));
      const Tensor bias = normal({96}, dtype);
      const Tensor full = normal({130, 96}, dtype);
      const Tensor mat1 = normal({130, 70}, dtype);
      const Tensor mat2 = normal({70, 96}, dtype);
      // A bias row with beta = 1 is cuBLASLt's bias epilogue; a full addend is its C operand.
      same_as_cpu(
          {bias, mat1, mat2},
          [&](const std::vector<Tensor>& t) {
            return bp::_addmm_activation(t[0], t[1], t[2], 1, 1, use_gelu);
          },
          tolerance_of(dtype));
      same_as_cpu(
          {full, mat1, mat2},
          [&](const std::vector<Tensor>& t) {
            return bp::_addmm_activation(
                t[0], t[1], t[2].transpose(0, 1).contiguous().transpose(0, 1), 0.5, 2, use_gelu);
          },
          tolerance_of(dtype));
    }
  }
}

// Probabilities enter P V rounded to the 16-bit type, as in every flash-attention kernel.
double attention_tolerance(bp::DType dtype) { return dtype == bp::kBFloat16 ? 3e-2 : 1e-2; }

TEST_CASE(
    "fused attention: half types, head sizes 64 and 128, causal or not, tails and strided heads") {
  SKIP_WITHOUT_CUDA_DEVICE();
  struct Lengths {
    int64_t query, key;
  };
  for (const bp::DType dtype : {bp::kFloat16, bp::kBFloat16}) {
    for (const int64_t head_dim : {64, 128}) {
      for (const Lengths lengths :
           {Lengths{256, 256}, Lengths{77, 130}, Lengths{130, 33}, Lengths{1, 1}}) {
        for (const bool causal : {false, true}) {
          INFO(bp::dtype_name(dtype) << " E=" << head_dim << " L=" << lengths.query
                                     << " S=" << lengths.key << (causal ? " causal" : ""));
          // (batch, sequence, heads, E) transposed to (batch, heads, sequence, E): strided heads,
          // as a model's projections give them. Transposed inside fn, since to() copies a view
          // densely.
          const Tensor q = normal({2, lengths.query, 3, head_dim}, dtype);
          const Tensor k = normal({2, lengths.key, 3, head_dim}, dtype);
          const Tensor v = normal({2, lengths.key, 3, head_dim}, dtype);
          same_as_cpu(
              {q, k, v},
              [&](const std::vector<Tensor>& t) {
                return bp::_scaled_dot_product_fused_attention(
                    t[0].transpose(1, 2), t[1].transpose(1, 2), t[2].transpose(1, 2), causal);
              },
              attention_tolerance(dtype));
        }
      }
    }
    INFO("no keys: zeros");
    same_as_cpu(
        {normal({2, 5, 64}, dtype), normal({2, 0, 64}, dtype), normal({2, 0, 64}, dtype)},
        [](const std::vector<Tensor>& t) {
          return bp::_scaled_dot_product_fused_attention(t[0], t[1], t[2]);
        },
        0);
  }
}

TEST_CASE(
    "fused attention: cases the kernel does not fuse are refused, and take the composite path") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const Device gpu = cudatest::cuda_devices().front();
  // float32, a head size of 96, and a value size unlike the key's.
  const std::vector<std::vector<Tensor>> refused = {
      {normal({2, 40, 64}), normal({2, 50, 64}), normal({2, 50, 64})},
      {normal({2, 40, 96}, bp::kBFloat16), normal({2, 50, 96}, bp::kBFloat16),
       normal({2, 50, 96}, bp::kBFloat16)},
      {normal({2, 40, 64}, bp::kFloat16), normal({2, 50, 64}, bp::kFloat16),
       normal({2, 50, 128}, bp::kFloat16)}};
  for (const std::vector<Tensor>& operands : refused) {
    INFO(bp::dtype_name(operands[0].dtype())
         << " E=" << operands[0].size(-1) << " Ev=" << operands[2].size(-1));
    try {
      bp::_scaled_dot_product_fused_attention(operands[0].to(gpu), operands[1].to(gpu),
                                              operands[2].to(gpu));
      FAIL("the fused kernel took a case it does not fuse");
    } catch (const bp::Error& error) {
      CHECK(error.code() == bp::ErrorCode::NotImplemented);
    }
    same_as_cpu(
        operands,
        [](const std::vector<Tensor>& t) {
          return bp::scaled_dot_product_attention(t[0], t[1], t[2]);
        },
        tolerance_of(operands[0].dtype()));
  }
  // Query rows 2 bytes past a 16-byte boundary (the kernel copies rows in 16-byte vectors), sliced
  // after to(), which copies a view densely.
  const Tensor wide_query = normal({2, 40, 72}, bp::kFloat16);
  const Tensor key = normal({2, 50, 64}, bp::kFloat16), value = normal({2, 50, 64}, bp::kFloat16);
  auto misaligned = [](const Tensor& q) { return q.slice(2, 1, 65); };
  try {
    bp::_scaled_dot_product_fused_attention(misaligned(wide_query.to(gpu)), key.to(gpu),
                                            value.to(gpu));
    FAIL("the fused kernel took misaligned rows");
  } catch (const bp::Error& error) {
    CHECK(error.code() == bp::ErrorCode::NotImplemented);
  }
  same_as_cpu(
      {wide_query, key, value},
      [&](const std::vector<Tensor>& t) {
        return bp::scaled_dot_product_attention(misaligned(t[0]), t[1], t[2], std::nullopt, 0.0,
                                                true);
      },
      tolerance_of(bp::kFloat16));
}

}  // namespace
