// The tensors conformance cases are made of: deterministic sample values that every dtype
// holds exactly, the memory layouts a kernel must read (contiguous, transposed, sliced,
// expanded), and reading any tensor back as doubles. bp-conformance and the project's own op
// tests (tests/ops) build their cases from these.
#pragma once

#include <backplane/backplane.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bp::conformance {

using Shape = std::vector<int64_t>;
using Values = std::vector<double>;

int64_t numel_of(const Shape& sizes);
std::string shape_string(const Shape& sizes);  // "[2, 3]"

// Deterministic values that every dtype holds exactly: multiples of 1/8 in [-4, 4] for the
// floating dtypes (so sums and products stay exact in float32), small integers for the others
// (non-negative for UInt8), 0 and 1 for Bool. Repeats are common, which exercises ties.
Values sample_values(int64_t count, DType dtype, uint64_t seed);

// A tensor on `device` holding `values` (row-major over `sizes`) converted to `dtype` on the host.
Tensor make_tensor(const Values& values, const Shape& sizes, DType dtype, Device device = {});

enum class Layout {
  Contiguous,
  Transposed,  // the last two dims swapped by a view
  Sliced,      // every other element of a wider tensor, from an offset
  Expanded,    // dim 0 expanded from size 1 (stride 0); read-only
};
inline constexpr Layout kAllLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Sliced,
                                         Layout::Expanded};
// Layouts a kernel may write to (an expanded tensor has overlapping elements).
inline constexpr Layout kWritableLayouts[] = {Layout::Contiguous, Layout::Transposed,
                                              Layout::Sliced};
std::string name_of(Layout layout);

// Whether `layout` changes anything for a tensor of `sizes` (a transposed view needs two dims,
// the others one).
bool applies_to(Layout layout, const Shape& sizes);

// A tensor of `sizes` holding sample values, laid out as `layout` on `device` (a layout that
// needs more dims than the tensor has falls back to contiguous).
Tensor sample_tensor(const Shape& sizes, DType dtype, Layout layout, uint64_t seed,
                     Device device = {});

// An uninitialised tensor of `sizes` laid out as `layout` (for out= arguments).
Tensor empty_tensor(const Shape& sizes, DType dtype, Layout layout, Device device = {});

// `host` (any layout) on `device` as a view laid out as `layout`, made with host kernels and
// plain copies to the device only, so that a device's strided kernels are what is tested. An
// expanded view repeats `host`'s first index along dim 0, so its values differ from `host`'s.
Tensor laid_out(const Tensor& host, Layout layout, Device device);

// The values laid_out(host, layout, device) shows, as a view of `host`.
Tensor host_view(const Tensor& host, Layout layout);

// Every element of `t` (any dtype, device and layout) in row-major order.
Values values_of(const Tensor& t);

// `value` as a tensor of `dtype` stores it: integers wrap modulo their width (as the kernels'
// integer arithmetic does), Bool is `value != 0`, floating values round to the dtype (values
// beyond its range become infinite).
double stored_as(DType dtype, double value);

}  // namespace bp::conformance
