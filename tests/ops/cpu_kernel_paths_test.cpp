// The cpu backend's kernels take different paths by layout and length: contiguous operands
// run vector loops with scalar tails, strided or broadcast ones run strided loops, 16-bit
// floats are converted in blocks, large tensors are split across threads, reductions sum rows
// in blocks or columns side by side, and row kernels work in place or on gathered copies.
// Each case here sits on a boundary between paths and checks the result against a plain
// reference, so that every path, and every length around a vector width, a block size or the
// parallel threshold, gives the same answer.
#include "op_test_support.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <numeric>
#include <vector>

namespace optest {
namespace {

const Device kCpu = Device::cpu();

// Lengths just around every width and block size the kernels use: vector lanes (4, 8, 16), the
// 64-element split unit, 256-element conversion blocks and the 32K-element parallel threshold
// and sum blocks.
const std::vector<int64_t> kBoundaryLengths = {1,   2,    3,    7,     8,     9,     15,   16,  17,
                                               31,  33,   63,   64,    65,    255,   256,  257, 511,
                                               513, 1023, 1025, 32767, 32768, 32769, 65600};

const std::vector<DType> kFloatingDtypes = {bp::kFloat32, bp::kFloat64, bp::kFloat16,
                                            bp::kBFloat16};

// x laid out three ways for an elementwise op on n elements: contiguous, every other element
// of a wider tensor, and one value broadcast to all n.
enum class Access { Contiguous, Strided, Broadcast };
const Access kAccesses[] = {Access::Contiguous, Access::Strided, Access::Broadcast};
const char* access_name(Access access) {
  switch (access) {
    case Access::Contiguous: return "contiguous";
    case Access::Strided: return "strided";
    case Access::Broadcast: return "broadcast";
  }
  return "?";
}

Tensor operand(int64_t n, DType dtype, Access access, uint64_t seed) {
  switch (access) {
    case Access::Contiguous: return sample_tensor({n}, dtype, Layout::Contiguous, seed, kCpu);
    case Access::Strided: return sample_tensor({n}, dtype, Layout::Sliced, seed, kCpu);
    case Access::Broadcast:
      return sample_tensor({1}, dtype, Layout::Contiguous, seed, kCpu).expand({n});
  }
  return {};
}

TEST_CASE("cpu kernel paths: elementwise ops at every boundary length, layout and dtype") {
  for (const int64_t n : kBoundaryLengths) {
    for (const DType dtype : kFloatingDtypes) {
      for (const Access access : kAccesses) {
        INFO(n << " elements of " << name_of(dtype) << ", first operand " << access_name(access));
        const Tensor a = operand(n, dtype, access, 1);
        const Tensor b = sample_tensor({n}, dtype, Layout::Contiguous, 2, kCpu);
        const Values x = values_of(a);
        const Values y = values_of(b);
        Values sum(x.size()), product(x.size()), relu(x.size()), exp(x.size()), silu(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
          sum[i] = x[i] + 2 * y[i];
          product[i] = x[i] * y[i];
          relu[i] = x[i] < 0 ? 0 : x[i];
          exp[i] = std::exp(x[i]);
          silu[i] = x[i] / (1 + std::exp(-x[i]));
        }
        check_tensor(bp::add(a, b, 2), {n}, dtype, sum);
        check_tensor(bp::mul(a, b), {n}, dtype, product);
        check_tensor(bp::relu(a), {n}, dtype, relu);
        check_tensor(bp::exp(a), {n}, dtype, exp);
        check_tensor(bp::silu(a), {n}, dtype, silu);
        Tensor strided_out = empty_tensor({n}, dtype, Layout::Sliced, kCpu);
        bp::add_out(strided_out, a, b, 2);
        check_tensor(strided_out, {n}, dtype, sum);
      }
    }
  }
}

TEST_CASE("cpu kernel paths: large operands whose rows cross (transposes) walk in tiles") {
  // A batch of 3 of 130 x 200: whole 64-element tiles and tails along both crossing dims, and
  // enough elements for the threaded paths. Values are their own row-major positions, so the
  // expected results need no copy of their own.
  const int64_t batch = 3, rows = 130, cols = 200;
  const Tensor source = bp::arange(batch * rows * cols, bp::kFloat32).view({batch, rows, cols});
  const auto position = [&](int64_t b, int64_t row, int64_t col) {
    return static_cast<double>((b * rows + row) * cols + col);
  };
  Values transposed;  // source.transpose(1, 2), in row-major order
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t col = 0; col < cols; ++col) {
      for (int64_t row = 0; row < rows; ++row) transposed.push_back(position(b, row, col));
    }
  }
  const Shape transposed_shape = {batch, cols, rows};
  for (const DType dtype : {bp::kFloat32, bp::kFloat64, bp::kInt64}) {
    INFO("reading across, into " << name_of(dtype));
    const Tensor typed = source.to(dtype);
    check_tensor(typed.transpose(1, 2).contiguous(), transposed_shape, dtype, transposed);
    check_tensor(source.transpose(1, 2).to(dtype), transposed_shape, dtype, transposed);
    Values doubled = transposed;
    for (double& v : doubled) v *= 2;
    check_tensor(bp::add(typed.transpose(1, 2), typed.transpose(1, 2).contiguous()),
                 transposed_shape, dtype, doubled);

    INFO("writing across");
    Tensor out = bp::empty({batch, rows, cols}, dtype);
    out.transpose(1, 2).copy_(typed.transpose(1, 2).contiguous());
    Values in_order(static_cast<size_t>(batch * rows * cols));
    for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = static_cast<double>(i);
    check_tensor(out, {batch, rows, cols}, dtype, in_order);
  }
}

TEST_CASE("cpu kernel paths: index_select and embedding of many slices, split across threads") {
  // A batch of 3 of 130 x 200, each element (its row-major position mod 100) exact in every
  // dtype, so that one formula gives every expected value; enough slices for the threaded
  // walk, along every dim, of single elements (typed loads and stores), rows and whole matrices.
  const int64_t batch = 3, rows = 130, cols = 200;
  const Shape shape = {batch, rows, cols};
  const auto value = [&](int64_t b, int64_t row, int64_t col) {
    return static_cast<double>(((b * rows + row) * cols + col) % 100);
  };
  Values values;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t row = 0; row < rows; ++row) {
      for (int64_t col = 0; col < cols; ++col) values.push_back(value(b, row, col));
    }
  }
  // 250 indices, repeating and out of order; and every other one of them, as a strided view.
  Values picks, batch_picks;
  for (int64_t i = 0; i < 250; ++i) {
    picks.push_back(static_cast<double>(i * 7 % rows));
    batch_picks.push_back(static_cast<double>(i * 7 % rows % batch));
  }
  const Tensor index = make_tensor(picks, {250}, bp::kInt64, kCpu);
  const Tensor batch_index = make_tensor(batch_picks, {250}, bp::kInt64, kCpu);
  const Tensor every_other = index.slice(0, 0, 250, 2);
  const auto pick = [&](int64_t i) { return static_cast<int64_t>(picks[static_cast<size_t>(i)]); };
  for (const DType dtype : {bp::kUInt8, bp::kFloat16, bp::kFloat32, bp::kInt64}) {
    INFO(name_of(dtype));
    const Tensor x = make_tensor(values, shape, dtype, kCpu);
    Values along_cols, along_rows, along_batch, across_transposed, by_strided_index;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t row = 0; row < rows; ++row) {
        for (int64_t i = 0; i < 250; ++i) along_cols.push_back(value(b, row, pick(i)));
      }
      for (int64_t i = 0; i < 250; ++i) {
        for (int64_t col = 0; col < cols; ++col) along_rows.push_back(value(b, pick(i), col));
      }
    }
    for (int64_t i = 0; i < 250; ++i) {
      for (int64_t row = 0; row < rows; ++row) {
        for (int64_t col = 0; col < cols; ++col)
          along_batch.push_back(value(pick(i) % batch, row, col));
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t col = 0; col < cols; ++col) {
        for (int64_t i = 0; i < 250; ++i) across_transposed.push_back(value(b, pick(i), col));
      }
      for (int64_t row = 0; row < rows; ++row) {
        for (int64_t i = 0; i < 250; i += 2) by_strided_index.push_back(value(b, row, pick(i)));
      }
    }
    check_tensor(bp::index_select(x, 2, index), {batch, rows, 250}, dtype, along_cols);
    check_tensor(bp::index_select(x, 1, index), {batch, 250, cols}, dtype, along_rows);
    check_tensor(bp::index_select(x, 0, batch_index), {250, rows, cols}, dtype, along_batch);
    check_tensor(bp::index_select(x.transpose(1, 2), 2, index), {batch, cols, 250}, dtype,
                 across_transposed);
    check_tensor(bp::index_select(x, 2, every_other), {batch, rows, 125}, dtype, by_strided_index);
    // embedding: rows of the first matrix, picked by a 25 x 10 view of the indices.
    Values embedded;
    for (int64_t i = 0; i < 250; ++i) {
      for (int64_t col = 0; col < cols; ++col) embedded.push_back(value(0, pick(i), col));
    }
    check_tensor(bp::embedding(x.select(0, 0), index.view({25, 10})), {25, 10, cols}, dtype,
                 embedded);
  }
}

TEST_CASE("cpu kernel paths: in-place elementwise ops read each element before writing it") {
  for (const int64_t n : {int64_t{17}, int64_t{65600}}) {
    for (const DType dtype : {bp::kFloat32, bp::kFloat16}) {
      INFO(n << " elements of " << name_of(dtype));
      Tensor a = sample_tensor({n}, dtype, Layout::Contiguous, 3, kCpu);
      const Tensor b = sample_tensor({n}, dtype, Layout::Contiguous, 4, kCpu);
      const Values x = values_of(a);
      const Values y = values_of(b);
      Values expected(x.size());
      for (size_t i = 0; i < x.size(); ++i) expected[i] = x[i] * y[i];
      bp::mul_out(a, a, b);
      check_tensor(a, {n}, dtype, expected);
    }
  }
}

// The value of half-precision bits, decoded by definition.
double half_value(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  const double sign = (bits & 0x8000) ? -1 : 1;
  if (exponent == 0x1f) {
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  }
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// `value` rounded to nearest even with `mantissa_bits` explicit mantissa bits and normal
// exponents from `min_exponent`, by definition; beyond `max_finite` (halfway to the next
// power of two and above) it is infinite.
double round_to_format(double value, int mantissa_bits, int min_exponent, double max_finite) {
  if (std::isnan(value) || value == 0) return value;
  const int exponent = std::max(std::ilogb(value), min_exponent);
  const double quantum = std::ldexp(1, exponent - mantissa_bits);
  const double rounded = std::nearbyint(value / quantum) * quantum;  // ties to even
  const double overflow = max_finite + quantum / 2;
  if (std::abs(value) >= overflow) {
    return std::copysign(std::numeric_limits<double>::infinity(), value);
  }
  return rounded;
}

// Every float32 that rounds somewhere interesting near each value of a 16-bit format: the
// value itself, the midpoints to its neighbours and the floats just beside those midpoints.
std::vector<float> rounding_probes(const std::vector<double>& format_values) {
  std::vector<float> probes;
  for (size_t i = 0; i + 1 < format_values.size(); ++i) {
    const double low = format_values[i];
    const double high = format_values[i + 1];
    if (!std::isfinite(low) || !std::isfinite(high)) continue;
    const auto middle = static_cast<float>((low + high) / 2);  // exact in float
    probes.push_back(static_cast<float>(low));
    probes.push_back(middle);
    probes.push_back(std::nextafter(middle, -std::numeric_limits<float>::infinity()));
    probes.push_back(std::nextafter(middle, std::numeric_limits<float>::infinity()));
  }
  for (const float special : {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), 65519.0f, 65520.0f, 1e30f,
                              -1e30f, 1e-30f, std::numeric_limits<float>::denorm_min()}) {
    probes.push_back(special);
  }
  return probes;
}

bool same_value(double actual, double expected) {
  if (std::isnan(expected)) return std::isnan(actual);
  return actual == expected && std::signbit(actual) == std::signbit(expected);
}

TEST_CASE("cpu kernel paths: float16 converts to and from float32 exactly, rounding to even") {
  std::vector<bp::Half> all(65536);
  for (uint32_t bits = 0; bits < 65536; ++bits) all[bits].bits = static_cast<uint16_t>(bits);
  const std::vector<float> widened =
      bp::from_vector(all, {65536}).to(bp::kFloat32).to_vector<float>();
  size_t wrong = 0;
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    if (!same_value(widened[bits], half_value(static_cast<uint16_t>(bits)))) ++wrong;
  }
  CHECK_MESSAGE(wrong == 0, wrong << " of 65536 float16 values widen wrongly");

  std::vector<double> positive;
  for (uint32_t bits = 0; bits < 0x7c00; ++bits) {
    positive.push_back(half_value(static_cast<uint16_t>(bits)));
  }
  std::vector<float> probes = rounding_probes(positive);
  for (size_t i = 0, count = probes.size(); i < count; ++i) probes.push_back(-probes[i]);
  const auto n = static_cast<int64_t>(probes.size());
  const std::vector<bp::Half> narrowed =
      bp::from_vector(probes, {n}).to(bp::kFloat16).to_vector<bp::Half>();
  wrong = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    const double expected = round_to_format(probes[i], 10, -14, 65504);
    if (!same_value(half_value(narrowed[i].bits), expected) && ++wrong <= 5) {
      INFO(probes[i] << " became " << half_value(narrowed[i].bits) << ", expected " << expected);
      CHECK(false);
    }
  }
  CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " float32 values narrow wrongly");
}

TEST_CASE("cpu kernel paths: bfloat16 converts to and from float32 exactly, rounding to even") {
  std::vector<bp::BFloat16> all(65536);
  for (uint32_t bits = 0; bits < 65536; ++bits) all[bits].bits = static_cast<uint16_t>(bits);
  const std::vector<float> widened =
      bp::from_vector(all, {65536}).to(bp::kFloat32).to_vector<float>();
  std::vector<double> positive;
  size_t wrong = 0;
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const uint32_t word = bits << 16;
    float expected;
    std::memcpy(&expected, &word, sizeof(expected));
    if (!same_value(widened[bits], expected)) ++wrong;
    if (bits < 0x7f80) positive.push_back(expected);
  }
  CHECK_MESSAGE(wrong == 0, wrong << " of 65536 bfloat16 values widen wrongly");

  std::vector<float> probes = rounding_probes(positive);
  for (size_t i = 0, count = probes.size(); i < count; ++i) probes.push_back(-probes[i]);
  const auto n = static_cast<int64_t>(probes.size());
  const std::vector<bp::BFloat16> narrowed =
      bp::from_vector(probes, {n}).to(bp::kBFloat16).to_vector<bp::BFloat16>();
  const double max_finite = std::ldexp(255.0 / 128, 127);
  wrong = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    const uint32_t word = static_cast<uint32_t>(narrowed[i].bits) << 16;
    float actual;
    std::memcpy(&actual, &word, sizeof(actual));
    const double expected = round_to_format(probes[i], 7, -126, max_finite);
    if (!same_value(actual, expected) && ++wrong <= 5) {
      INFO(probes[i] << " became " << actual << ", expected " << expected);
      CHECK(false);
    }
  }
  CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " float32 values narrow wrongly");
}

// The unit in the last place of float at |rounded|.
long double ulp_of(float rounded) {
  return std::nextafter(std::abs(rounded), std::numeric_limits<float>::infinity()) -
         std::abs(rounded);
}

// Every binade from 2^low to 2^high, both signs, 256 values each.
std::vector<float> binade_samples(int low, int high) {
  std::vector<float> values;
  for (int exponent = low; exponent <= high; ++exponent) {
    for (int k = 0; k < 256; ++k) {
      const float x = std::ldexp(1.0f + static_cast<float>(k) / 256.0f, exponent);
      values.push_back(x);
      values.push_back(-x);
    }
  }
  return values;
}

// `inputs`, then `specials`, then both infinities and NaN.
std::vector<float> with_specials(std::vector<float> inputs, std::initializer_list<float> specials) {
  inputs.insert(inputs.end(), specials);
  for (const float value :
       {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::quiet_NaN()}) {
    inputs.push_back(value);
  }
  return inputs;
}

// Runs the float32 function `op` on every input at once (vector loops and scalar tails) and
// checks each result: NaN where exact = exact_of(x) (in long double) is NaN, else as
// ok(x, result, exact) says; names the first few failures.
template <typename Op, typename Exact, typename Ok>
void check_each_result(const char* name, const std::vector<float>& inputs, Op op, Exact exact_of,
                       Ok ok) {
  const auto n = static_cast<int64_t>(inputs.size());
  const std::vector<float> actual = op(bp::from_vector(inputs, {n})).template to_vector<float>();
  size_t wrong = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const long double exact = exact_of(static_cast<long double>(inputs[i]));
    const bool right = std::isnan(exact) ? std::isnan(actual[i]) : ok(inputs[i], actual[i], exact);
    if (!right && ++wrong <= 5) {
      INFO(name << "(" << inputs[i] << ") = " << actual[i] << ", exactly "
                << static_cast<double>(exact));
      CHECK(false);
    }
  }
  CHECK_MESSAGE(wrong == 0,
                wrong << " of " << n << " results of " << name << " are off by more than allowed");
}

TEST_CASE("cpu kernel paths: float32 exp is within 2 ulp everywhere, subnormal results included") {
  std::vector<float> steps;
  for (float x = -110.0f; x < 90.0f; x += 0.0037f) steps.push_back(x);
  const std::vector<float> inputs =
      with_specials(steps, {0.0f, -0.0f, 88.72283f, 88.7229f, -87.33654f, -103.97f, -103.98f});
  check_each_result(
      "exp", inputs, [](const Tensor& t) { return bp::exp(t); },
      [](long double x) { return std::exp(static_cast<double>(x)); },
      [](float, float actual, long double exact) {
        const auto rounded = static_cast<float>(exact);
        if (std::isinf(rounded)) return actual == rounded;
        return std::abs(actual - exact) <= 2 * ulp_of(rounded);
      });
}

TEST_CASE("cpu kernel paths: float32 tanh is within 3 ulp everywhere, signs and limits kept") {
  // Every binade from 2^-30 to 2^5, both signs: the series below |x| = 0.3, the exponential form
  // above, and the switch between them.
  const std::vector<float> inputs = with_specials(
      binade_samples(-30, 5), {0.0f, -0.0f, 0.3f, std::nextafter(0.3f, 0.0f), 1e-40f, 9.0f, 20.0f});
  check_each_result(
      "tanh", inputs, [](const Tensor& t) { return bp::tanh(t); },
      [](long double x) { return std::tanh(static_cast<double>(x)); },
      [](float, float actual, long double exact) {
        const auto rounded = static_cast<float>(exact);
        if (rounded == 0.0f) {
          return actual == rounded && std::signbit(actual) == std::signbit(rounded);
        }
        return std::abs(actual - exact) <= 3 * ulp_of(rounded) && std::abs(actual) <= 1.0f;
      });
}

TEST_CASE("cpu kernel paths: float32 log is within 1 ulp everywhere, subnormal inputs included") {
  // Every binade of float, subnormal ones included, both signs (log of a negative is NaN).
  const std::vector<float> inputs =
      with_specials(binade_samples(-149, 127),
                    {0.0f, -0.0f, 1.0f, std::nextafter(1.0f, 0.0f), std::nextafter(1.0f, 2.0f),
                     std::numbers::sqrt2_v<float>, std::numeric_limits<float>::min(),
                     std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()});
  check_each_result(
      "log", inputs, [](const Tensor& t) { return bp::log(t); },
      [](long double x) { return std::log(static_cast<double>(x)); },
      [](float, float actual, long double exact) {
        const auto rounded = static_cast<float>(exact);
        if (std::isinf(rounded) || rounded == 0.0f) return actual == rounded;
        return std::abs(actual - exact) <= ulp_of(rounded);
      });
}

TEST_CASE("cpu kernel paths: float32 exact GELU keeps its relative accuracy in the left tail") {
  // 7 ulp down to x = -5, 5 ulp down to -9 (results above 1e-18), then 2e-6 of the result
  // until it leaves the normal floats.
  check_each_result(
      "gelu", binade_samples(-30, 4), [](const Tensor& t) { return bp::gelu(t); },
      [](long double x) { return 0.5L * x * std::erfc(-x / std::sqrt(2.0L)); },
      [](float x, float actual, long double exact) {
        const auto rounded = static_cast<float>(exact);
        if (std::abs(rounded) < std::numeric_limits<float>::min()) {
          return std::abs(actual - exact) <= 1e-44L;
        }
        const long double ulp = ulp_of(rounded);
        const long double allowed = x >= -5 ? 7 * ulp : x >= -9 ? 5 * ulp : 2e-6L * std::abs(exact);
        return std::abs(actual - exact) <= allowed;
      });

  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special =
      bp::gelu(bp::from_vector(std::vector<float>{inf, -inf, NAN, -0.0f, 0.0f, -30.0f}, {6}))
          .to_vector<float>();
  CHECK(special[0] == inf);
  CHECK(std::isnan(special[1]));  // 0.5 * -inf * (1 + erf(-inf)), as the formula gives
  CHECK(std::isnan(special[2]));
  CHECK((special[3] == 0.0f && std::signbit(special[3])));
  CHECK((special[4] == 0.0f && !std::signbit(special[4])));
  CHECK((special[5] == 0.0f && std::signbit(special[5])));
}

TEST_CASE("cpu kernel paths: float64 exact GELU keeps its relative accuracy in the left tail") {
  const std::vector<double> samples = {-0.5, -1, -3, -6, -10, -20, -35};
  const std::vector<double> results =
      bp::gelu(bp::from_vector(samples, {static_cast<int64_t>(samples.size())}))
          .to_vector<double>();
  for (size_t i = 0; i < samples.size(); ++i) {
    const long double x = samples[i];
    const long double exact = 0.5L * x * std::erfc(-x / std::sqrt(2.0L));
    INFO("gelu(" << samples[i] << ") = " << results[i] << ", exactly "
                 << static_cast<double>(exact));
    // Rounding -x/sqrt 2 to a double alone moves erfc, which falls as exp(-x^2/2), by about
    // x^2 times the rounding error (1.3e-13 of the result at x = -35).
    CHECK(std::abs(results[i] - exact) <= (1e-14L + 2.5e-16L * x * x) * std::abs(exact));
  }
}

double sum_of(const Values& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

TEST_CASE("cpu kernel paths: sums over rows, columns and everything at boundary lengths") {
  // Columns are summed in tiles of 4096; rows in blocks of 32K elements, in parallel when there
  // are few rows.
  const Shape shapes[] = {{3, 1},    {5, 7},    {2, 17},    {17, 2},    {9, 513},  {513, 9},
                          {4, 1025}, {3, 4097}, {3, 65600}, {65600, 3}, {40, 1030}};
  const DType dtypes[] = {bp::kFloat32, bp::kFloat64, bp::kFloat16, bp::kBFloat16, bp::kInt32};
  for (const Shape& shape : shapes) {
    for (const DType dtype : dtypes) {
      for (const Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Sliced}) {
        INFO(shape_string(shape) << " " << name_of(dtype) << " " << name_of(layout));
        const Tensor x = sample_tensor(shape, dtype, layout, 5, kCpu);
        const Values values = values_of(x);
        const DType result = bp::is_floating_point(dtype) ? dtype : bp::kInt64;
        for (const int64_t dim : {0, 1}) {
          std::vector<bool> reduced = {dim == 0, dim == 1};
          check_tensor(bp::sum(x, {dim}), reduced_shape(shape, reduced, false), result,
                       reduce_groups(values, shape, reduced, sum_of));
        }
        check_tensor(bp::sum(x), {}, result, {sum_of(values)});
        if (bp::is_floating_point(dtype)) {
          check_tensor(bp::mean(x, {0}, true), {1, shape[1]}, dtype,
                       reduce_groups(values, shape, {true, false}, [](const Values& g) {
                         return sum_of(g) / static_cast<double>(g.size());
                       }));
        }
      }
    }
  }
}

// The position of a group's first largest element, NaN above everything.
size_t first_max(const Values& group) {
  size_t best = 0;
  for (size_t i = 1; i < group.size(); ++i) {
    const double v = group[i], b = group[best];
    if (std::isnan(v) ? !std::isnan(b) : v > b) best = i;
  }
  return best;
}

// amax and argmax of the matrix x, whose elements are `values`, over `dim`: each group's first
// largest element and its position.
void check_first_maxima(const Tensor& x, const Values& values, int64_t dim) {
  const Shape shape = x.sizes().vec();
  const std::vector<bool> reduced = {dim == 0, dim == 1};
  const Shape out_shape = reduced_shape(shape, reduced, false);
  check_tensor(
      bp::amax(x, {dim}), out_shape, x.dtype(),
      reduce_groups(values, shape, reduced, [](const Values& g) { return g[first_max(g)]; }));
  check_tensor(bp::argmax(x, dim), out_shape, bp::kInt64,
               reduce_groups(values, shape, reduced,
                             [](const Values& g) { return static_cast<double>(first_max(g)); }));
}

TEST_CASE("cpu kernel paths: maxima over leading dims, a row of groups at a time, ties and NaN") {
  // Reducing dim 0 reduces groups lying side by side (4096 at a time): the shapes cross a tile
  // of groups and reach the threaded sizes. Values are rounded to halves so that maxima tie,
  // and a few are NaN.
  const Shape shapes[] = {{5, 7}, {513, 9}, {3, 4097}, {40, 1030}, {7, 8200}};
  for (const Shape& shape : shapes) {
    for (const DType dtype : {bp::kFloat32, bp::kFloat16, bp::kInt32}) {
      for (const Layout layout : {Layout::Contiguous, Layout::Sliced}) {
        INFO(shape_string(shape) << " " << name_of(dtype) << " " << name_of(layout));
        Values values = values_of(sample_tensor(shape, dtype, layout, 7, kCpu));
        for (size_t i = 0; i < values.size(); ++i) {
          values[i] = std::round(values[i] * 2) / 2;
          if (bp::is_floating_point(dtype) && i % 997 == 3) values[i] = std::nan("");
        }
        check_first_maxima(make_tensor(values, shape, dtype, kCpu), values, 0);
      }
    }
  }
}

TEST_CASE("cpu kernel paths: maxima along rows, many lanes at a time, ties and NaN") {
  // Contiguous rows of two blocks or more (a block is 8 vectors of 16 bytes: 32 float32 or
  // int32, 16 float64) are searched a block at a time, then the rest one by one. Values from a
  // few integers make the maximum tie across lanes, so the earliest position must win; odd rows
  // hold a NaN, at a position that moves from row to row. A slice starting at column 1 makes
  // rows that begin off a vector boundary.
  const Shape shapes[] = {{9, 31}, {9, 33}, {9, 64}, {64, 65}, {40, 1030}, {3, 4097}, {7, 8200}};
  for (const Shape& shape : shapes) {
    for (const DType dtype : {bp::kFloat32, bp::kFloat16, bp::kFloat64, bp::kInt32}) {
      INFO(shape_string(shape) << " " << name_of(dtype));
      Values values = values_of(sample_tensor(shape, dtype, Layout::Contiguous, 11, kCpu));
      const size_t columns = static_cast<size_t>(shape[1]);
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = std::round(values[i] * 1.5);
        const size_t row = i / columns;
        if (bp::is_floating_point(dtype) && row % 2 == 1 && i % columns == (row * 37) % columns) {
          values[i] = std::nan("");
        }
      }
      const Tensor whole = make_tensor(values, shape, dtype, kCpu);
      for (const int64_t first_column : {0, 1}) {
        INFO("from column " << first_column);
        const Tensor x = whole.slice(1, first_column, shape[1]);
        check_first_maxima(x, values_of(x), 1);
        check_tensor(bp::argmax(x), {}, bp::kInt64, {static_cast<double>(first_max(values_of(x)))});
      }
    }
  }
}

// softmax of one group, in double.
Values softmax_of(const Values& group) {
  const double max = *std::max_element(group.begin(), group.end());
  double total = 0;
  for (const double v : group) total += std::exp(v - max);
  Values result;
  for (const double v : group) result.push_back(std::exp(v - max) / total);
  return result;
}

// Float64 values whose sums round, so that any change in the order of additions shows (float32
// sums are accumulated in float64, where they are mostly exact).
Tensor inexact_values(const Shape& shape) {
  const int64_t n = numel_of(shape);
  const Tensor index = bp::arange(n, bp::kFloat64);
  return bp::div(index.mul(0.7311).add(0.1), index.add(3)).view(shape);
}

void check_same_bits(const Tensor& actual, const Tensor& expected) {
  const std::vector<double> a = actual.contiguous().to_vector<double>();
  const std::vector<double> e = expected.contiguous().to_vector<double>();
  REQUIRE(a.size() == e.size());
  CHECK(std::memcmp(a.data(), e.data(), a.size() * sizeof(double)) == 0);
}

TEST_CASE("cpu kernel paths: a sum's bits depend only on its group, not on how work is split") {
  INFO("a long row summed alone (its blocks in parallel) or among many rows (a row per thread)");
  const Tensor rows = inexact_values({16, 70001});
  const Tensor row_sums = bp::sum(rows, {1});
  for (int64_t r = 0; r < 16; r += 5) {
    check_same_bits(bp::sum(rows.slice(0, r, r + 1), {1}), row_sums.slice(0, r, r + 1));
  }
  check_same_bits(bp::sum(rows.slice(0, 3, 4)), row_sums.slice(0, 3, 4).view({}));

  INFO("columns summed side by side all at once (split across threads) or a few at a time");
  const Tensor matrix = inexact_values({300, 1000});
  const Tensor column_sums = bp::sum(matrix, {0});
  for (int64_t c = 0; c < 1000; c += 100) {
    check_same_bits(bp::sum(matrix.slice(1, c, c + 100), {0}), column_sums.slice(0, c, c + 100));
  }
}

TEST_CASE(
    "cpu kernel paths: softmax, log_softmax, layer norm and rms norm at boundary row lengths") {
  for (const int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 257, 1025}) {
    for (const DType dtype : kFloatingDtypes) {
      for (const Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Sliced}) {
        INFO(n << " elements per row, " << name_of(dtype) << " " << name_of(layout));
        const Shape shape = {3, n};
        const Tensor x = sample_tensor(shape, dtype, layout, 6, kCpu);
        const Values values = values_of(x);
        const std::vector<bool> rows = {false, true};
        const Values softmax = transform_groups(values, shape, rows, softmax_of);
        Values log_softmax = softmax;
        for (double& v : log_softmax) v = std::log(v);
        check_tensor(bp::softmax(x, 1), shape, dtype, softmax);
        check_tensor(bp::log_softmax(x, 1), shape, dtype, log_softmax);

        const Tensor weight = sample_tensor({n}, dtype, Layout::Sliced, 7, kCpu);
        const Values w = values_of(weight);
        const auto normalized = [&](const Values& g, double center, double squares) {
          const double scale = 1 / std::sqrt(squares / static_cast<double>(g.size()) + 1e-5);
          Values result;
          for (size_t i = 0; i < g.size(); ++i) result.push_back((g[i] - center) * scale * w[i]);
          return result;
        };
        const auto [out, mean, rstd] = bp::native_layer_norm(x, {n}, weight, std::nullopt, 1e-5);
        check_tensor(out, shape, dtype, transform_groups(values, shape, rows, [&](const Values& g) {
                       const double m = sum_of(g) / static_cast<double>(g.size());
                       double squares = 0;
                       for (const double v : g) squares += (v - m) * (v - m);
                       return normalized(g, m, squares);
                     }));
        check_tensor(bp::rms_norm(x, {n}, weight, 1e-5), shape, dtype,
                     transform_groups(values, shape, rows, [&](const Values& g) {
                       double squares = 0;
                       for (const double v : g) squares += v * v;
                       return normalized(g, 0, squares);
                     }));
      }
    }
  }
}

TEST_CASE("cpu kernel paths: softmax over groups lying side by side, a tile of 1024 at a time") {
  // Softmax over dim 0 of a row-major matrix: the groups are columns, normalised 1024 at a time,
  // a row of each pass at a time; 2100 columns are two whole tiles and a tail, split between
  // threads. Columns of a slice (every other one) and an output laid out by columns take the
  // same passes with strides.
  const Shape shape = {60, 2100};
  const std::vector<bool> columns = {true, false};
  for (const DType dtype : {bp::kFloat32, bp::kFloat64, bp::kBFloat16}) {
    INFO(name_of(dtype));
    const Tensor whole = sample_tensor(shape, dtype, Layout::Contiguous, 8, kCpu);
    for (const bool every_other : {false, true}) {
      INFO((every_other ? "every other column" : "every column"));
      const Tensor x = every_other ? whole.slice(1, 0, shape[1], 2) : whole;
      const Shape x_shape = x.sizes().vec();
      const Values softmax = transform_groups(values_of(x), x_shape, columns, softmax_of);
      Values log_softmax = softmax;
      for (double& v : log_softmax) v = std::log(v);
      check_tensor(bp::softmax(x, 0), x_shape, dtype, softmax);
      check_tensor(bp::log_softmax(x, 0), x_shape, dtype, log_softmax);
      Tensor by_columns = bp::empty({x_shape[1], x_shape[0]}, dtype).transpose(0, 1);
      bp::softmax_out(by_columns, x, 0);
      check_tensor(by_columns, x_shape, dtype, softmax);
    }
  }
}

TEST_CASE("cpu kernel paths: norms over groups lying side by side, a tile of 1024 at a time") {
  // Norms over the rows of a transposed matrix: the groups are columns of x, 1100 of them (a
  // whole tile of 1024 and a tail), normalised a row of each pass at a time, and written into
  // a new tensor whose groups are rows, 64 groups at a time. The weight and bias vary along the
  // group, so each row of x takes its own.
  const Shape shape = {50, 1100};
  const std::vector<bool> columns = {true, false};
  for (const DType dtype : {bp::kFloat32, bp::kFloat64, bp::kBFloat16, bp::kFloat16}) {
    INFO(name_of(dtype));
    const Tensor x = sample_tensor(shape, dtype, Layout::Contiguous, 8, kCpu);
    const Tensor weight = sample_tensor({50}, dtype, Layout::Contiguous, 9, kCpu);
    const Tensor bias = sample_tensor({50}, dtype, Layout::Contiguous, 10, kCpu);
    const Values values = values_of(x), weights = values_of(weight), biases = values_of(bias);
    const double eps = 1e-5;

    // (v - center) / sqrt(mean((v - center)^2) + eps) * weight + bias over one group.
    const auto normalized = [&](const Values& g, double center, bool affine) {
      double squares = 0;
      for (const double v : g) squares += (v - center) * (v - center);
      const double scale = 1 / std::sqrt(squares / static_cast<double>(g.size()) + eps);
      Values result;
      for (size_t p = 0; p < g.size(); ++p) {
        const double y = (g[p] - center) * scale;
        result.push_back(affine ? y * weights[p] + biases[p] : y);
      }
      return result;
    };
    const auto mean_of = [](const Values& g) { return sum_of(g) / static_cast<double>(g.size()); };
    // The outputs are computed column by column of x and compared in x's layout.
    const auto [y, mean, rstd] = bp::native_layer_norm(x.transpose(0, 1), {50}, weight, bias, eps);
    check_tensor(y.transpose(0, 1), shape, dtype,
                 transform_groups(values, shape, columns, [&](const Values& g) {
                   return normalized(g, mean_of(g), true);
                 }));
    check_tensor(mean, {1100, 1}, dtype, reduce_groups(values, shape, columns, mean_of));
    check_tensor(rstd, {1100, 1}, dtype,
                 reduce_groups(values, shape, columns, [&](const Values& g) {
                   double squares = 0;
                   for (const double v : g) squares += (v - mean_of(g)) * (v - mean_of(g));
                   return 1 / std::sqrt(squares / static_cast<double>(g.size()) + eps);
                 }));
    check_tensor(bp::layer_norm(x.transpose(0, 1), {50}).transpose(0, 1), shape, dtype,
                 transform_groups(values, shape, columns, [&](const Values& g) {
                   return normalized(g, mean_of(g), false);
                 }));
    // RMS norm with a weight and no bias: the bias of `normalized` is taken off again.
    const Values rms = transform_groups(values, shape, columns, [&](const Values& g) {
      Values result = normalized(g, 0, true);
      for (size_t p = 0; p < g.size(); ++p) result[p] -= biases[p];
      return result;
    });
    check_tensor(bp::rms_norm(x.transpose(0, 1), {50}, weight, eps).transpose(0, 1), shape, dtype,
                 rms);
    INFO("into an out= tensor whose groups lie side by side too");
    // Filled with NaN, so that an element left unwritten shows.
    Tensor side_by_side =
        bp::full(shape, std::numeric_limits<double>::quiet_NaN(), dtype).transpose(0, 1);
    bp::rms_norm_out(side_by_side, x.transpose(0, 1), {50}, weight, eps);
    check_tensor(side_by_side.transpose(0, 1), shape, dtype, rms);
  }
}

TEST_CASE("cpu kernel paths: layer norm of rows far from zero with a small spread") {
  // float32 moments are accumulated around each row's first element: an outlier there must not
  // cost accuracy either.
  // The spread is a few float32 ulps of the values: E[x^2] - E[x]^2 taken around 0 would cancel
  // all but a few bits even in double.
  for (const double first : {10000.0, 10000.5}) {
    INFO("first element " << first);
    Values values;
    for (int64_t i = 0; i < 1000; ++i) values.push_back(10000 + static_cast<double>(i % 7) / 1024);
    values[0] = first;
    const Tensor x = make_tensor(values, {1, 1000}, bp::kFloat32, kCpu);
    const Values stored = values_of(x);
    const double mean = sum_of(stored) / 1000;
    double squares = 0;
    for (const double v : stored) squares += (v - mean) * (v - mean);
    const double rstd = 1 / std::sqrt(squares / 1000 + 1e-5);
    Values expected;
    for (const double v : stored) expected.push_back((v - mean) * rstd);
    const auto [out, mean_out, rstd_out] =
        bp::native_layer_norm(x, {1000}, std::nullopt, std::nullopt, 1e-5);
    check_tensor(out, {1, 1000}, bp::kFloat32, expected);
    check_tensor(mean_out, {1, 1}, bp::kFloat32, {mean});
    check_tensor(rstd_out, {1, 1}, bp::kFloat32, {rstd});
  }
}

TEST_CASE("cpu kernel paths: softmax and log_softmax written over their input") {
  for (const int64_t n : {5, 40}) {
    INFO(n << " elements per row");
    const Tensor x = sample_tensor({3, n}, bp::kFloat32, Layout::Contiguous, 8, kCpu);
    const Tensor expected_softmax = bp::softmax(x, 1);
    const Tensor expected_log_softmax = bp::log_softmax(x, 1);
    Tensor in_place = x.clone();
    bp::softmax_out(in_place, in_place, 1);
    check_tensor(in_place, {3, n}, bp::kFloat32, values_of(expected_softmax));
    in_place = x.clone();
    bp::log_softmax_out(in_place, in_place, 1);
    check_tensor(in_place, {3, n}, bp::kFloat32, values_of(expected_log_softmax));
  }
}

TEST_CASE("cpu kernel paths: softmax groups with NaN or infinities, along rows and side by side") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const int64_t n : {5, 40}) {
    INFO(n << " elements per group");
    Values values(static_cast<size_t>(4 * n), 1.0);
    // Group 0 holds one NaN, group 1 is all -inf, group 2 holds one +inf, group 3 one -inf.
    values[static_cast<size_t>(n / 2)] = nan;
    for (int64_t i = n; i < 2 * n; ++i) values[static_cast<size_t>(i)] = -inf;
    values[static_cast<size_t>(2 * n + 1)] = inf;
    values[static_cast<size_t>(3 * n + 3)] = -inf;
    const Tensor x = make_tensor(values, {4, n}, bp::kFloat32, kCpu);
    // The groups as rows, and as columns of the transposed matrix, read back as rows.
    const Tensor columns = x.transpose(0, 1).contiguous();
    for (const Tensor& result_tensor :
         {bp::softmax(x, 1), bp::softmax(columns, 0).transpose(0, 1)}) {
      const Values result = values_of(result_tensor);
      for (int64_t i = 0; i < 3 * n; ++i) CHECK(std::isnan(result[static_cast<size_t>(i)]));
      for (int64_t i = 3 * n; i < 4 * n; ++i) {
        const double expected = i == 3 * n + 3 ? 0.0 : 1.0 / static_cast<double>(n - 1);
        CHECK(result[static_cast<size_t>(i)] == doctest::Approx(expected).epsilon(1e-6));
      }
    }
  }
}

}  // namespace
}  // namespace optest
