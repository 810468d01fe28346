// Rows of elements converted to and from their compute type (16-bit floats to float), so that
// kernels' loops along a row run over consecutive elements of one type: contiguous rows through
// convert_elements' block loop, strided ones element by element.
#pragma once

#include "kernels/strided_loop.h"

#include <cstdint>
#include <type_traits>

namespace bp::cpu {

// A step of 1 known at compile time, for the Step parameters below: loops over it vectorise
// without a check.
inline constexpr std::integral_constant<int64_t, 1> kUnitStep{};

// to[j] = from[j * step] converted to To, for j < count: a contiguous row (16-bit floats
// included) through convert_elements' block loop.
template <typename To, typename From, typename Step>
void convert_row_from(const From* from, Step step, To* to, int64_t count) {
  if (step == 1) {
    convert_elements(from, to, count);
  } else {
    for (int64_t j = 0; j < count; ++j) to[j] = static_cast<To>(from[j * step]);
  }
}

// to[j * step] = from[j] converted to To, for j < count.
template <typename To, typename From, typename Step>
void convert_row_into(const From* from, To* to, Step step, int64_t count) {
  if (step == 1) {
    convert_elements(from, to, count);
  } else {
    for (int64_t j = 0; j < count; ++j) to[j * step] = static_cast<To>(from[j]);
  }
}

// `count` elements of a row, `step` apart, read in C: the row itself where it is C already and
// contiguous, else its conversion into `buffer`, so that kernels' loops along the row run over
// consecutive elements of C.
template <typename C, typename T, typename Step>
const C* row_in_compute_type(const T* row, int64_t count, Step step, C* buffer) {
  if constexpr (std::is_same_v<T, C>) {
    if (step == 1) return row;
  }
  convert_row_from(row, step, buffer, count);
  return buffer;
}

// y[j * step] = value(j) converted to T, for j in [begin, end): 16-bit floats in a row of
// consecutive elements through `buffer` and one convert_elements.
template <typename T, typename C, typename Step, typename ValueFn>
void store_row(T* y, int64_t begin, int64_t end, Step step, C* buffer, ValueFn&& value) {
  if constexpr (kConvertsToCompute<T>) {
    if (step == 1) {
      for (int64_t j = begin; j < end; ++j) buffer[j - begin] = value(j);
      convert_elements(buffer, y + begin, end - begin);
      return;
    }
  }
  for (int64_t j = begin; j < end; ++j) y[j * step] = static_cast<T>(value(j));
}

}  // namespace bp::cpu
