// map_elements, the SDK's elementwise loop: every element of the output is fn of the inputs'
// elements at its index, whatever the inputs' layouts (dense, broadcast along rows or columns or
// entirely, transposed), for rows shorter and longer than the blocks it works in, for dtypes
// computed as themselves and as float (Half), and in place.
#include <backplane/sdk/strided_loop.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace {

using bp::Half;
using bp::plugin::compute_t;
using bp::plugin::map_elements;
using bp::plugin::Operand;

constexpr int64_t kRows = 3;

// How an input of shape [kRows, columns] lies in memory.
struct Layout {
  const char* name;
  int64_t (*storage)(int64_t columns);                 // elements it holds
  std::array<int64_t, 2> (*strides)(int64_t columns);  // over [kRows, columns]
};

const Layout kLayouts[] = {
    {"dense", [](int64_t c) { return kRows * c; },
     [](int64_t c) {
       return std::array<int64_t, 2>{c, 1};
     }},
    {"a column broadcast along rows", [](int64_t) { return kRows; },
     [](int64_t) {
       return std::array<int64_t, 2>{1, 0};
     }},
    {"a row broadcast down columns", [](int64_t c) { return c; },
     [](int64_t) {
       return std::array<int64_t, 2>{0, 1};
     }},
    {"one value broadcast", [](int64_t) { return int64_t{1}; },
     [](int64_t) {
       return std::array<int64_t, 2>{0, 0};
     }},
    {"transposed", [](int64_t c) { return kRows * c; },
     [](int64_t) {
       return std::array<int64_t, 2>{1, kRows};
     }},
};

// Distinct values, so that reading the wrong element shows.
template <typename T>
std::vector<T> values(int64_t count, int seed) {
  std::vector<T> v;
  for (int64_t i = 0; i < count; ++i)
    v.push_back(static_cast<T>(static_cast<float>((i * 7 + seed) % 101) - 50.0f));
  return v;
}

template <typename T>
T at(const std::vector<T>& data, const std::array<int64_t, 2>& strides, int64_t row,
     int64_t column) {
  return data[row * strides[0] + column * strides[1]];
}

// Not symmetric in its operands, so that swapped operands show.
const auto kFn = [](auto x, auto y) { return x - 2 * y; };

template <typename T>
void check_every_layout_pair(int64_t columns) {
  const std::array<int64_t, 2> sizes{kRows, columns};
  const std::array<int64_t, 2> dense{columns, 1};
  for (const Layout& a : kLayouts) {
    for (const Layout& b : kLayouts) {
      INFO(a.name << " and " << b.name << ", " << columns << " columns");
      const std::vector<T> x = values<T>(a.storage(columns), 1),
                           y = values<T>(b.storage(columns), 2);
      const std::array<int64_t, 2> x_strides = a.strides(columns), y_strides = b.strides(columns);
      std::vector<T> out(kRows * columns);
      map_elements(std::span<const int64_t>(sizes), kFn, Operand<T>{out.data(), dense},
                   Operand<const T>{x.data(), x_strides}, Operand<const T>{y.data(), y_strides});
      int64_t wrong = 0;
      for (int64_t r = 0; r < kRows; ++r) {
        for (int64_t c = 0; c < columns; ++c) {
          using C = compute_t<T>;
          const T expected = static_cast<T>(
              kFn(static_cast<C>(at(x, x_strides, r, c)), static_cast<C>(at(y, y_strides, r, c))));
          wrong += out[r * columns + c] != expected;
        }
      }
      CHECK(wrong == 0);
    }
  }
}

}  // namespace

TEST_CASE(
    "map_elements: each output element is fn of the inputs' elements at its index, in any layout") {
  // Rows of one element, of less than, exactly and more than one block, and of several blocks
  // and a part.
  for (const int64_t columns : {int64_t{1}, int64_t{255}, bp::plugin::kConversionBlock,
                                bp::plugin::kConversionBlock + 1, int64_t{1000}}) {
    check_every_layout_pair<float>(columns);
    check_every_layout_pair<int64_t>(columns);
    check_every_layout_pair<Half>(columns);
  }
}

TEST_CASE(
    "map_elements: the output may be one of the inputs, each element read before it is written") {
  const int64_t columns = 1000;
  const std::array<int64_t, 2> sizes{kRows, columns};
  const std::array<int64_t, 2> dense{columns, 1}, column_broadcast{1, 0};
  for (const bool broadcast_other : {false, true}) {
    INFO((broadcast_other ? "the other input broadcast along rows" : "the other input dense"));
    std::vector<float> x = values<float>(kRows * columns, 1);
    const std::vector<float> y = values<float>(broadcast_other ? kRows : kRows * columns, 2);
    const std::array<int64_t, 2> y_strides = broadcast_other ? column_broadcast : dense;
    std::vector<float> expected(x.size());
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t c = 0; c < columns; ++c)
        expected[r * columns + c] = kFn(x[r * columns + c], at(y, y_strides, r, c));
    }
    map_elements(std::span<const int64_t>(sizes), kFn, Operand<float>{x.data(), dense},
                 Operand<const float>{x.data(), dense}, Operand<const float>{y.data(), y_strides});
    CHECK(x == expected);
  }
}

TEST_CASE("typed operands refuse a view of another dtype, naming both") {
  static_assert(bp::plugin::kDTypeOf<const float> == bp::kFloat32);
  static_assert(bp::plugin::kDTypeOf<Half> == bp::kFloat16);
  static_assert(bp::plugin::kDTypeOf<bool> == bp::kBool);
  static_assert(bp::plugin::kDTypeOf<uint8_t> == bp::kUInt8);
  int8_t storage[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  int64_t strides[1] = {1};
  DLTensor tensor{};
  tensor.data = storage;
  tensor.ndim = 1;
  tensor.dtype = bp::to_dlpack(bp::kInt8);
  tensor.shape = shape;
  tensor.strides = strides;
  const bp::plugin::TensorView view(&tensor);
  for (const bool output : {false, true}) {
    INFO((output ? "output" : "input"));
    try {
      if (output) {
        bp::plugin::output_operand<float>(view);
      } else {
        bp::plugin::input_operand<float>(view);
      }
      FAIL("an int8 view was read as float");
    } catch (const bp::plugin::Error& e) {
      CHECK(e.code() == BP_STATUS_UNIMPLEMENTED);
      CHECK(std::string(e.what()) ==
            "this kernel reads its operands as Float and cannot take a Char tensor (a kernel for "
            "several dtypes picks its element type with bp::plugin::visit)");
    }
  }
  CHECK(bp::plugin::input_operand<int8_t>(view).data == storage);
}
