// scaled_dot_product_attention against attention computed row by row in double: plain, causal,
// with a boolean or additive mask, with a custom scale, and with grouped key/value heads.
#include "op_test_support.h"

#include <cmath>
#include <limits>

namespace optest {
namespace {

struct Attention {
  int64_t batch_heads, target, source, embed, value_embed;
};

// mask(b, i, j): NaN to drop position j for query i, else a value added to the score.
template <typename Mask>
Values attention_reference(const Values& q, const Values& k, const Values& v, const Attention& a,
                           double scale, Mask mask, int64_t kv_group = 1) {
  Values out;
  for (int64_t b = 0; b < a.batch_heads; ++b) {
    const int64_t kv = b / kv_group;
    for (int64_t i = 0; i < a.target; ++i) {
      Values weights;
      double largest = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < a.source; ++j) {
        double score = 0;
        for (int64_t e = 0; e < a.embed; ++e) {
          score += q[static_cast<size_t>((b * a.target + i) * a.embed + e)] *
                   k[static_cast<size_t>((kv * a.source + j) * a.embed + e)];
        }
        const double added = mask(b, i, j);
        score = std::isnan(added) ? -std::numeric_limits<double>::infinity()
                                  : score * scale + added;
        weights.push_back(score);
        largest = std::max(largest, score);
      }
      double total = 0;
      for (double& w : weights) total += (w = std::exp(w - largest));
      for (int64_t e = 0; e < a.value_embed; ++e) {
        double sum = 0;
        for (int64_t j = 0; j < a.source; ++j) {
          sum += weights[static_cast<size_t>(j)] / total *
                 v[static_cast<size_t>((kv * a.source + j) * a.value_embed + e)];
        }
        out.push_back(sum);
      }
    }
  }
  return out;
}

double no_mask(int64_t, int64_t, int64_t) { return 0; }

}  // namespace

TEST_CASE("scaled_dot_product_attention: plain, causal, masked and scaled") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : {bp::kFloat32, bp::kFloat64}) {
      for (const Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Sliced}) {
        INFO(name_of(dtype) << " " << name_of(layout));
        const Attention a{6, 4, 5, 8, 3};
        const Tensor q = bp::mul(sample_tensor({2, 3, 4, 8}, dtype, layout, 601, device), 0.25);
        const Tensor k = bp::mul(sample_tensor({2, 3, 5, 8}, dtype, layout, 602, device), 0.25);
        const Tensor v = sample_tensor({2, 3, 5, 3}, dtype, layout, 603, device);
        const Values qs = values_of(q), ks = values_of(k), vs = values_of(v);
        const double scale = 1 / std::sqrt(8.0);
        check_tensor(bp::scaled_dot_product_attention(q, k, v), {2, 3, 4, 3}, dtype,
                     attention_reference(qs, ks, vs, a, scale, no_mask));

        INFO("is_causal: query i attends to keys 0..i");
        check_tensor(bp::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true),
                     {2, 3, 4, 3}, dtype,
                     attention_reference(qs, ks, vs, a, scale, [&](int64_t, int64_t i, int64_t j) {
                       return j > i ? nan : 0.0;
                     }));

        INFO("a boolean mask broadcast over batch and heads, and a custom scale");
        // Every row keeps its last position, so that no row is entirely masked.
        Values keep_values = sample_values(20, bp::kBool, 604);
        for (size_t i = 4; i < keep_values.size(); i += 5) keep_values[i] = 1;
        const Tensor keep = make_tensor(keep_values, {4, 5}, bp::kBool, device);
        check_tensor(bp::scaled_dot_product_attention(q, k, v, keep, 0.0, false, 0.5),
                     {2, 3, 4, 3}, dtype,
                     attention_reference(qs, ks, vs, a, 0.5, [&](int64_t, int64_t i, int64_t j) {
                       return keep_values[static_cast<size_t>(i * 5 + j)] != 0 ? 0.0 : nan;
                     }));

        INFO("an additive mask per head");
        const Tensor bias = sample_tensor({3, 1, 5}, dtype, Layout::Contiguous, 605, device);
        const Values bias_values = values_of(bias);
        check_tensor(bp::scaled_dot_product_attention(q, k, v, bias), {2, 3, 4, 3}, dtype,
                     attention_reference(qs, ks, vs, a, scale, [&](int64_t b, int64_t, int64_t j) {
                       return bias_values[static_cast<size_t>((b % 3) * 5 + j)];
                     }));
      }
    }
  }
}

TEST_CASE("scaled_dot_product_attention: grouped key/value heads and 2-D operands") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    const Tensor q = sample_tensor({1, 4, 3, 8}, bp::kFloat64, Layout::Contiguous, 611, device);
    const Tensor k = sample_tensor({1, 2, 5, 8}, bp::kFloat64, Layout::Transposed, 612, device);
    const Tensor v = sample_tensor({1, 2, 5, 6}, bp::kFloat64, Layout::Sliced, 613, device);
    check_tensor(
        bp::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, false, 0.125, true),
        {1, 4, 3, 6}, bp::kFloat64,
        attention_reference(values_of(q), values_of(k), values_of(v), {4, 3, 5, 8, 6}, 0.125,
                            no_mask, /*kv_group=*/2));
    const Tensor q2 = sample_tensor({3, 4}, bp::kFloat32, Layout::Contiguous, 614, device);
    const Tensor k2 = sample_tensor({2, 4}, bp::kFloat32, Layout::Contiguous, 615, device);
    const Tensor v2 = sample_tensor({2, 2}, bp::kFloat32, Layout::Contiguous, 616, device);
    check_tensor(bp::scaled_dot_product_attention(q2, k2, v2, std::nullopt, 0.0, false, 0.1),
                 {3, 2}, bp::kFloat32,
                 attention_reference(values_of(q2), values_of(k2), values_of(v2), {1, 3, 2, 4, 2},
                                     0.1, no_mask));
  }
}

TEST_CASE("scaled_dot_product_attention refuses what it cannot compute") {
  const Tensor q = bp::zeros({2, 4, 8});
  const Tensor k = bp::zeros({2, 5, 8});
  const Tensor v = bp::zeros({2, 5, 3});
  check_error([&] { bp::scaled_dot_product_attention(q, k, v, std::nullopt, 0.1); },
              "dropout_p must be 0, got 0.1");
  check_error([&] { bp::scaled_dot_product_attention(q, k, v, bp::zeros({4, 5}), 0.0, true); },
              "pass either is_causal=true or attn_mask, not both");
  check_error([&] { bp::scaled_dot_product_attention(q, bp::zeros({2, 5, 7}), v); },
              "key must end in query's embedding size");
  check_error([&] { bp::scaled_dot_product_attention(q, k, v.to(bp::kFloat64)); },
              "must share one floating-point dtype, got Float, Float, Double");
  check_error([&] { bp::scaled_dot_product_attention(q, k, v, bp::zeros({4, 5}, bp::kInt64)); },
              "attn_mask must be Bool (true = attend) or query's dtype Float");
  check_error(
      [&] {
        bp::scaled_dot_product_attention(bp::zeros({1, 3, 4, 8}), bp::zeros({1, 2, 5, 8}),
                                         bp::zeros({1, 2, 5, 3}), std::nullopt, 0.0, false,
                                         std::nullopt, true);
      },
      "head count divides the query's");
}

}  // namespace optest
