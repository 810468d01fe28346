// scaled_dot_product_attention against attention computed row by row in double: plain, causal,
// with a boolean or additive mask, with a custom scale, and with grouped key/value heads; and the
// fused kernel op that it calls when a backend provides one, on shapes that cross its blocks.
#include "op_test_support.h"

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

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
        score =
            std::isnan(added) ? -std::numeric_limits<double>::infinity() : score * scale + added;
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

// The fused op's result, or nothing where the device's backend does not fuse this case: a
// backend may refuse some (ops.yaml), and scaled_dot_product_attention then takes its composite
// path. The CPU backend fuses every case.
std::optional<Tensor> fused_unless_refused(Device device, const std::function<Tensor()>& call) {
  try {
    return call();
  } catch (const bp::Error& error) {
    if (error.code() != bp::ErrorCode::NotImplemented) throw;
    CHECK_MESSAGE(!device.is_cpu(), "the CPU backend refused a case: " << error.what());
    return std::nullopt;
  }
}

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
        check_tensor(bp::scaled_dot_product_attention(q, k, v, keep, 0.0, false, 0.5), {2, 3, 4, 3},
                     dtype,
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
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const DType dtype : {bp::kFloat64, bp::kFloat32}) {
      for (const Layout query_layout : {Layout::Contiguous, Layout::Transposed}) {
        INFO(name_of(dtype) << ", query " << name_of(query_layout));
        // 2 batches of 6 query heads, in groups of 3 over 2 key/value heads.
        const Attention a{12, 3, 5, 8, 6};
        const Tensor q = sample_tensor({2, 6, 3, 8}, dtype, query_layout, 611, device);
        const Tensor k = sample_tensor({2, 2, 5, 8}, dtype, Layout::Transposed, 612, device);
        const Tensor v = sample_tensor({2, 2, 5, 6}, dtype, Layout::Sliced, 613, device);
        const Values qs = values_of(q), ks = values_of(k), vs = values_of(v);
        const auto gqa = [&](const std::optional<Tensor>& mask, bool causal) {
          return bp::scaled_dot_product_attention(q, k, v, mask, 0.0, causal, 0.125, true);
        };
        const Shape out_shape = {2, 6, 3, 6};
        check_tensor(gqa(std::nullopt, false), out_shape, dtype,
                     attention_reference(qs, ks, vs, a, 0.125, no_mask, /*kv_group=*/3));

        INFO("causal");
        check_tensor(gqa(std::nullopt, true), out_shape, dtype,
                     attention_reference(
                         qs, ks, vs, a, 0.125,
                         [&](int64_t, int64_t i, int64_t j) { return j > i ? nan : 0.0; }, 3));

        INFO("an additive mask per query head, and a boolean one for all heads");
        const Tensor bias = sample_tensor({6, 1, 5}, dtype, Layout::Contiguous, 614, device);
        const Values bias_values = values_of(bias);
        check_tensor(gqa(bias, false), out_shape, dtype,
                     attention_reference(
                         qs, ks, vs, a, 0.125,
                         [&](int64_t b, int64_t, int64_t j) {
                           return bias_values[static_cast<size_t>((b % 6) * 5 + j)];
                         },
                         3));
        Values keep_values = sample_values(15, bp::kBool, 615);
        for (size_t i = 0; i < keep_values.size(); i += 5) keep_values[i] = 1;  // none all masked
        const Tensor keep = make_tensor(keep_values, {1, 3, 5}, bp::kBool, device);
        check_tensor(gqa(keep, false), out_shape, dtype,
                     attention_reference(
                         qs, ks, vs, a, 0.125,
                         [&](int64_t, int64_t i, int64_t j) {
                           return keep_values[static_cast<size_t>(i * 5 + j)] != 0 ? 0.0 : nan;
                         },
                         3));
      }
    }
    const Tensor q2 = sample_tensor({3, 4}, bp::kFloat32, Layout::Contiguous, 614, device);
    const Tensor k2 = sample_tensor({2, 4}, bp::kFloat32, Layout::Contiguous, 615, device);
    const Tensor v2 = sample_tensor({2, 2}, bp::kFloat32, Layout::Contiguous, 616, device);
    check_tensor(bp::scaled_dot_product_attention(q2, k2, v2, std::nullopt, 0.0, false, 0.1),
                 {3, 2}, bp::kFloat32,
                 attention_reference(values_of(q2), values_of(k2), values_of(v2), {1, 3, 2, 4, 2},
                                     0.1, no_mask));
  }
}

TEST_CASE("_scaled_dot_product_fused_attention: blocks, tails, causal alignment and dtypes") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto causal = [&](int64_t, int64_t i, int64_t j) { return j > i ? nan : 0.0; };
  // Lengths on both sides of the kernels' block sizes, embeddings that are not whole vectors,
  // more queries than keys as well as fewer, and two leading dims as well as one. The CPU
  // backend reads keys and values in place for blocks of at most 8 query rows (5 here, and the
  // last 4 of 100) and through tiles for more.
  const std::vector<std::pair<Shape, Attention>> cases = {{{2, 3}, {6, 77, 130, 40, 24}},
                                                          {{2}, {2, 130, 33, 16, 64}},
                                                          {{1}, {1, 1, 1, 3, 5}},
                                                          {{2}, {2, 5, 130, 40, 24}},
                                                          {{1}, {1, 100, 70, 64, 40}}};
  for (const Device device : test_devices("_scaled_dot_product_fused_attention.out")) {
    for (const DType dtype : {bp::kFloat32, bp::kFloat64, bp::kFloat16, bp::kBFloat16}) {
      for (const auto& [leading, a] : cases) {
        for (const Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Sliced}) {
          INFO(device.str() << " " << name_of(dtype) << " " << name_of(layout) << " L=" << a.target
                            << " S=" << a.source << " E=" << a.embed << " Ev=" << a.value_embed);
          const auto shape = [&](int64_t rows, int64_t columns) {
            Shape sizes = leading;
            sizes.push_back(rows);
            sizes.push_back(columns);
            return sizes;
          };
          const Tensor q =
              bp::mul(sample_tensor(shape(a.target, a.embed), dtype, layout, 621, device), 0.3);
          const Tensor k =
              bp::mul(sample_tensor(shape(a.source, a.embed), dtype, layout, 622, device), 0.3);
          const Tensor v =
              sample_tensor(shape(a.source, a.value_embed), dtype, layout, 623, device);
          const Values qs = values_of(q), ks = values_of(k), vs = values_of(v);
          const double scale = 1 / std::sqrt(static_cast<double>(a.embed));
          const Shape out_shape = shape(a.target, a.value_embed);
          if (auto out = fused_unless_refused(
                  device, [&] { return bp::_scaled_dot_product_fused_attention(q, k, v); })) {
            check_tensor(*out, out_shape, dtype,
                         attention_reference(qs, ks, vs, a, scale, no_mask));
          }
          if (auto out = fused_unless_refused(device, [&] {
                return bp::_scaled_dot_product_fused_attention(q, k, v, true, 0.2);
              })) {
            check_tensor(*out, out_shape, dtype, attention_reference(qs, ks, vs, a, 0.2, causal));
          }

          INFO("out= of any layout");
          Tensor out = empty_tensor(out_shape, dtype, layout, device);
          if (fused_unless_refused(device, [&] {
                return bp::_scaled_dot_product_fused_attention_out(out, q, k, v, true);
              })) {
            check_tensor(out, out_shape, dtype, attention_reference(qs, ks, vs, a, scale, causal));
          }
        }
      }
    }
  }
}

TEST_CASE("_scaled_dot_product_fused_attention: empty operands and undefined softmax rows") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Device device : test_devices("_scaled_dot_product_fused_attention.out")) {
    INFO(device.str());
    const Tensor v = sample_tensor({2, 5, 3}, bp::kFloat32, Layout::Contiguous, 632, device);

    INFO("no keys: the product with an empty value is 0, as in the composite");
    for (const int64_t rows : {4, 20}) {
      const Tensor q = sample_tensor({2, rows, 8}, bp::kFloat32, Layout::Contiguous, 631, device);
      if (auto out = fused_unless_refused(device, [&] {
            return bp::_scaled_dot_product_fused_attention(q, bp::zeros({2, 0, 8}).to(device),
                                                           bp::zeros({2, 0, 3}).to(device));
          })) {
        check_tensor(*out, {2, rows, 3}, bp::kFloat32,
                     Values(static_cast<size_t>(2 * rows * 3), 0.0));
      }
    }
    if (auto out = fused_unless_refused(device, [&] {
          return bp::_scaled_dot_product_fused_attention(bp::zeros({2, 0, 8}).to(device),
                                                         bp::zeros({2, 5, 8}).to(device), v);
        })) {
      check_tensor(*out, {2, 0, 3}, bp::kFloat32, {});
    }

    INFO("queries and keys of no columns: every score is 0, every row the mean of the values");
    const Values v_values = values_of(v);
    for (const int64_t rows : {4, 20}) {
      INFO(rows << " query rows");
      Values means;
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t e = 0; e < 3; ++e) {
            double sum = 0;
            for (int64_t s = 0; s < 5; ++s)
              sum += v_values[static_cast<size_t>((b * 5 + s) * 3 + e)];
            means.push_back(sum / 5);
          }
        }
      }
      if (auto out = fused_unless_refused(device, [&] {
            return bp::_scaled_dot_product_fused_attention(bp::zeros({2, rows, 0}).to(device),
                                                           bp::zeros({2, 5, 0}).to(device), v);
          })) {
        check_tensor(*out, {2, rows, 3}, bp::kFloat32, means);
      }
    }

    INFO("a NaN key leaves every row that sees it NaN, and only those");
    // With is_causal, row i sees keys 0..i. Queries of 4 and of 20 rows (past the OpenCL
    // kernels' blocks of 8 rows), keys of 40 (past their blocks of 32 keys).
    Values key_values(2 * 40 * 8, 0.5);
    key_values[2 * 8 + 1] = nan;  // batch 0, key position 2
    const Tensor k = make_tensor(key_values, {2, 40, 8}, bp::kFloat32, device);
    const Tensor values = sample_tensor({2, 40, 3}, bp::kFloat32, Layout::Contiguous, 634, device);
    for (const int64_t rows : {4, 20}) {
      INFO(rows << " query rows");
      const Tensor q = sample_tensor({2, rows, 8}, bp::kFloat32, Layout::Contiguous, 633, device);
      const std::optional<Tensor> out = fused_unless_refused(
          device, [&] { return bp::_scaled_dot_product_fused_attention(q, k, values, true); });
      if (!out) break;
      const Values values_out = values_of(*out);
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t e = 0; e < 3; ++e) {
          INFO("row " << i << ", column " << e);
          CHECK(std::isnan(values_out[static_cast<size_t>(i * 3 + e)]) == (i >= 2));
          CHECK(!std::isnan(values_out[static_cast<size_t>((rows + i) * 3 + e)]));  // batch 1
        }
      }
    }
  }
}

TEST_CASE("_scaled_dot_product_fused_attention refuses operands it cannot pair") {
  const Tensor q = bp::zeros({2, 4, 8});
  check_error(
      [&] {
        bp::_scaled_dot_product_fused_attention(q, bp::zeros({1, 5, 8}), bp::zeros({1, 5, 3}));
      },
      "must have the same leading dims (batch, heads, ...), got shapes [2, 4, 8], [1, 5, 8], [1, "
      "5, 3]; "
      "expand them first, or call scaled_dot_product_attention, which broadcasts");
  check_error(
      [&] {
        bp::_scaled_dot_product_fused_attention(q, bp::zeros({2, 5, 8}), bp::zeros({2, 6, 3}));
      },
      "key must end in query's embedding size and have value's sequence length");
  check_error(
      [&] {
        bp::_scaled_dot_product_fused_attention(q.to(bp::kInt32), bp::zeros({2, 5, 8}),
                                                bp::zeros({2, 5, 3}));
      },
      "must share one floating-point dtype");
}

TEST_CASE("scaled_dot_product_attention refuses what it cannot compute") {
  const Tensor q = bp::zeros({2, 4, 8});
  const Tensor k = bp::zeros({2, 5, 8});
  const Tensor v = bp::zeros({2, 5, 3});
  check_error([&] { bp::scaled_dot_product_attention(q, k, v, std::nullopt, 0.1); },
              "dropout_p must be 0, got 0.1");
  check_error(
      [&] {
        bp::scaled_dot_product_attention(q, k, v, bp::zeros({4, 5}), 0.0, true);
      },
      "pass either is_causal=true or attn_mask, not both");
  check_error(
      [&] {
        bp::scaled_dot_product_attention(q, bp::zeros({2, 5, 7}), v);
      },
      "key must end in query's embedding size");
  check_error([&] { bp::scaled_dot_product_attention(q, k, v.to(bp::kFloat64)); },
              "must share one floating-point dtype, got Float, Float, Double");
  check_error(
      [&] {
        bp::scaled_dot_product_attention(q, k, v, bp::zeros({4, 5}, bp::kInt64));
      },
      "attn_mask must be Bool (true = attend) or query's dtype Float");
  check_error(
      [&] {
        bp::scaled_dot_product_attention(bp::zeros({1, 3, 4, 8}), bp::zeros({1, 2, 5, 8}),
                                         bp::zeros({1, 2, 5, 3}), std::nullopt, 0.0, false,
                                         std::nullopt, true);
      },
      "head count divides the query's");
  check_error(
      [&] {
        bp::scaled_dot_product_attention(bp::zeros({1, 4, 4, 8}), bp::zeros({1, 2, 5, 8}),
                                         bp::zeros({1, 2, 5, 3}), bp::zeros({3, 4, 5}), 0.0, false,
                                         std::nullopt, true);
      },
      "attn_mask of shape [3, 4, 5] does not broadcast over the query's 4 heads: its dim -3 "
      "must be 1 or 4");
}

}  // namespace optest
