// What the op conformance tests share: sample tensors in several memory layouts, reading any
// tensor back as doubles, plain reference helpers, and a comparison with per-dtype tolerance.
// Every test runs on every loaded device; references are computed in double on the host.
#pragma once

#include <backplane/backplane.h>
#include <backplane/conformance/samples.h>
#include <backplane/sdk/kernel_dtypes.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace optest {

using bp::Device;
using bp::DType;
using bp::IntArrayRef;
using bp::Tensor;
using Shape = bp::conformance::Shape;
using Values = bp::conformance::Values;

// --- dtypes ------------------------------------------------------------------------------------

namespace kernel_dtypes = bp::plugin::kernel_dtypes;

// The dtypes ops.yaml declares that each of `Kernels` takes (each is a kernel op's type in
// kernel_dtypes: kernel_dtypes::sub_out): what a test sweeps where it tests ops on every dtype
// they take, so that the suite checks what ops.yaml says.
template <typename... Kernels>
std::vector<DType> declared_dtypes() {
  return bp::plugin::dtypes_in((bp::plugin::kAllDTypeSet & ... & Kernels::dtypes));
}

// Dtypes of inputs that an op converts before its kernel runs (exp of integers, copy_ from any
// dtype), and of cases that need a kind of number (NaN, Bool).
std::vector<DType> all_dtypes();
std::vector<DType> floating_dtypes();
std::vector<DType> non_bool_dtypes();
// "Float", for test context messages.
std::string name_of(DType dtype);

// The dtype a computation on `dtype` inputs produces when it promotes integers and Bool to
// Float32 (div, exp, ...).
DType floating_result(DType dtype);

// --- making tensors ----------------------------------------------------------------------------

// The conformance kit's sample tensors and layouts (<backplane/conformance/samples.h>), which
// bp-conformance's cases are made of too.
using bp::conformance::empty_tensor;
using bp::conformance::kAllLayouts;
using bp::conformance::kWritableLayouts;
using bp::conformance::Layout;
using bp::conformance::make_tensor;
using bp::conformance::name_of;
using bp::conformance::numel_of;
using bp::conformance::sample_tensor;
using bp::conformance::sample_values;
using bp::conformance::shape_string;
using bp::conformance::stored_as;
using bp::conformance::values_of;

// --- reading and comparing ---------------------------------------------------------------------

Shape shape_of(const Tensor& t);

// Checks `actual`'s shape, dtype and every element against `expected` (row-major): exact for
// integers and Bool, relative tolerance for floats (1e-5 Float, 1e-12 Double, 1e-2 for the
// 16-bit floats), plus `extra_absolute` for an op whose kernels may round intermediate values to
// the dtype; NaN matches NaN and infinities match themselves.
void check_tensor(const Tensor& actual, const Shape& sizes, DType dtype, const Values& expected,
                  double extra_absolute = 0);
// The same with an extra absolute tolerance of its own for each element.
void check_tensor(const Tensor& actual, const Shape& sizes, DType dtype, const Values& expected,
                  const Values& extra_absolute);

// The distance from |value| to the next larger value of the floating `dtype` (for normal
// values; 0 for 0, which any dtype holds exactly).
double unit_in_last_place(DType dtype, double value);

// An absolute tolerance for results of `magnitude` that the kernel may compute as a difference
// of terms that large (gradients, whose value can cancel to 0): a few units in the last place
// of `dtype` at that magnitude.
double cancellation_tolerance(DType dtype, double magnitude);

// Checks that `body` throws a bp::Error whose message contains `fragment`.
void check_error(const std::function<void()>& body, const std::string& fragment);

// --- devices -----------------------------------------------------------------------------------

// Every loaded device, the host first: each test runs its cases on all of them.
std::vector<Device> test_devices();

// The loaded devices whose backend implements `kernel_op` ("conv2d.out"): a backend may offer
// a subset of the ops, and is checked on the ones it offers.
std::vector<Device> test_devices(const std::string& kernel_op);
bool provides(Device device, const std::string& kernel_op);

// --- references --------------------------------------------------------------------------------

// The shape two shapes broadcast to, and `values` of shape `from` expanded to shape `to`.
Shape broadcast_shapes(const Shape& a, const Shape& b);
Values broadcast_values(const Values& values, const Shape& from, const Shape& to);

// A reduction's shape: `sizes` without the dims in `reduced`, or with them as 1 when `keepdim`.
Shape reduced_shape(const Shape& sizes, const std::vector<bool>& reduced, bool keepdim);
// Which of `ndim` dims a dim list names (negative dims wrap); an empty list names all.
std::vector<bool> reduced_mask(int64_t ndim, const Shape& dims);

// The flat indices of each group of a reduction over `reduced`: one group per index of the
// kept dims (in row-major order), holding its elements in row-major order of the reduced dims.
std::vector<std::vector<int64_t>> group_indices(const Shape& sizes,
                                                const std::vector<bool>& reduced);

// One value per group: fn(the group's values).
Values reduce_groups(const Values& values, const Shape& sizes, const std::vector<bool>& reduced,
                     const std::function<double(const Values&)>& fn);

// Each group replaced by fn(the group's values), which returns as many values.
Values transform_groups(const Values& values, const Shape& sizes, const std::vector<bool>& reduced,
                        const std::function<Values(const Values&)>& fn);

}  // namespace optest
