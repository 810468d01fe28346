// validate_probe SCENARIO: runs kernels for the BACKPLANE_VALIDATE tests, then prints each of
// bp::runtime_info().validation_findings as "finding: <message>" and "findings: <count>". A
// bp::Error is printed as "error: <message>", with exit status 3.
//   unwritten float32|int32  add.out on fixture_unwritten (which leaves the last element of
//                            its output unwritten), twice, on four elements of that dtype
//   writes_input             relu.out on fixture_writes_input (which writes its input), out of
//                            place, then in place
//   cpu                      a range of ops on the host, with outputs that alias inputs, views
//                            written through, and values equal to the poisons
//   past_end                 add.out on fixture_writes_past_end (which writes past the end of
//                            its float32 output), twice, then its correct float64 kernel on
//                            blocks the cache hands out again for other sizes
//   wrong_result             add.out on fixture_wrong_result (wrong for float32), twice, with
//                            an input broadcast
//   right_result             fixture_wrong_result's correct kernels (add for float64, mm, sum,
//                            cat) on views with gaps, in place, and on 0-size tensors
// The fixtures are found through BACKPLANE_PLUGIN_PATH.
#include <backplane/backplane.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

namespace {

void unwritten(std::string_view dtype) {
  const bp::Device device("fixture_unwritten");
  if (dtype == "int32") {
    const bp::Tensor a = bp::from_vector<int32_t>({1, 2, 3, 4}, {4}).to(device);
    bp::add(bp::add(a, a), a);
  } else {
    const bp::Tensor a = bp::from_vector<float>({1, 2, 3, 4}, {4}).to(device);
    bp::add(bp::add(a, a), a);
  }
}

void writes_input() {
  const bp::Device device("fixture_writes_input");
  const bp::Tensor x = bp::from_vector<float>({-1, 2, -3, 4}, {4}).to(device);
  bp::relu(x);
  bp::Tensor y = bp::from_vector<float>({-1, 2, -3, 4}, {4}).to(device);
  bp::relu_(y);
}

// Values whose bits are those of the first poisons, which correct kernels copy through.
bp::Tensor float_poison_values() {
  uint32_t bits = 0x7FF0A5A5u;
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return bp::from_vector<float>({value, 1, value, 2}, {2, 2});
}

void cpu() {
  const bp::Tensor a = bp::from_vector<float>({1, -2, 3, -4, 5, -6}, {2, 3});
  const bp::Tensor b = bp::from_vector<float>({6, 5, -4, 3, 2, 1}, {2, 3});
  bp::add(a, b);
  bp::mul(a, b);
  bp::sub(a, b, 2);
  bp::relu(a);
  bp::softmax(a, 1);
  bp::log_softmax(a, 0);
  bp::mm(a, b.transpose(0, 1));
  bp::sum(a, std::vector<int64_t>{1});
  bp::mean(a);
  bp::max(a, 1);
  bp::argmax(a, 1);
  bp::eq(a, b);
  bp::where(bp::gt(a, b), a, b);
  bp::cat({a, b}, 0);
  bp::index_select(a, 1, bp::from_vector<int64_t>({2, 0}, {2}));
  bp::layer_norm(a, {3});
  bp::conv2d(bp::ones({1, 1, 4, 4}), bp::ones({2, 1, 3, 3}), bp::ones({2}));
  bp::max_pool2d(bp::ones({1, 1, 4, 4}), {2, 2});
  a.to(bp::kInt32);
  bp::arange(5);
  // In place: the output is the input.
  bp::Tensor c = a.clone();
  bp::relu_(c);
  c.add_(b);
  // Views written through: the elements between them stay as they are.
  bp::Tensor d = bp::zeros({3, 4});
  d.transpose(0, 1).copy_(bp::ones({4, 3}));
  bp::Tensor column = d.slice(1, 1, 2);
  bp::fill_(column, 7);
  // Results that equal the poisons.
  bp::add(float_poison_values(), bp::zeros({2, 2}));
  float_poison_values().clone();
  const int32_t int_poison = static_cast<int32_t>(0xA5A5A5A5u);
  bp::add(bp::from_vector<int32_t>({int_poison, 3}, {2}), bp::zeros({2}, bp::kInt32));
  bp::from_vector<uint8_t>({0xA5, 0x5A}, {2}).clone();
}

void past_end() {
  const bp::Device device("fixture_writes_past_end");
  const bp::Tensor a = bp::from_vector<float>({1, 2, 3, 4}, {4}).to(device);
  bp::add(bp::add(a, a), a);
  for (const int64_t n : {4, 5, 7, 6, 0, 600}) {
    const bp::Tensor x = bp::ones({n}, bp::kFloat64).to(device);
    bp::Tensor y = bp::add(x, x);
    y.add_(x);
  }
}

void wrong_result() {
  const bp::Device device("fixture_wrong_result");
  const bp::Tensor a = bp::arange(20, bp::kFloat32).reshape({4, 5}).to(device);
  const bp::Tensor b = bp::full({5}, 0.5, bp::kFloat32).to(device);
  bp::add(a, b);
  bp::add(a, b);
}

void right_result() {
  const bp::Device device("fixture_wrong_result");
  for (const bp::DType dtype : {bp::kFloat32, bp::kFloat64}) {
    const bp::Tensor a = bp::arange(12, dtype).reshape({3, 4}).to(device);
    const bp::Tensor b = bp::arange(-6, 6, 1, dtype).reshape({4, 3}).to(device);
    bp::mm(a, b);
    bp::mm(a.slice(1, 0, 4, 2), b.transpose(0, 1).slice(0, 1, 3));
    bp::mm(bp::empty({0, 4}, dtype).to(device), b);
    bp::sum(a, std::vector<int64_t>{1});
    bp::sum(a.transpose(0, 1), std::vector<int64_t>{0}, true);
    bp::sum(a);
    bp::cat({a, a.slice(0, 0, 3, 2), bp::empty({0, 4}, dtype).to(device)}, 0);
    bp::cat({a.transpose(0, 1), b}, 1);
    if (dtype == bp::kFloat64) {
      bp::add(a, a.slice(0, 1, 2), 2);
      bp::Tensor c = bp::arange(12, dtype).reshape({3, 4}).to(device);
      c.add_(a);
      bp::add(bp::empty({0, 4}, dtype).to(device), bp::empty({0, 4}, dtype).to(device));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view scenario = argc > 1 ? argv[1] : "";
  try {
    if (scenario == "unwritten" && argc == 3) {
      unwritten(argv[2]);
    } else if (scenario == "writes_input") {
      writes_input();
    } else if (scenario == "cpu") {
      cpu();
    } else if (scenario == "past_end") {
      past_end();
    } else if (scenario == "wrong_result") {
      wrong_result();
    } else if (scenario == "right_result") {
      right_result();
    } else {
      std::fprintf(
          stderr,
          "usage: validate_probe unwritten float32|int32 | writes_input | cpu | past_end | "
          "wrong_result | right_result\n");
      return 2;
    }
  } catch (const bp::Error& error) {
    std::printf("error: %s\n", error.what());
    return 3;
  }
  const std::vector<std::string> findings = bp::runtime_info().validation_findings;
  for (const std::string& finding : findings) std::printf("finding: %s\n", finding.c_str());
  std::printf("findings: %zu\n", findings.size());
  return 0;
}
