#include "dispatch/out_arg.h"

#include "tensor/internal_overlap.h"
#include "tensor/shape.h"
#include "tensor/type_promotion.h"

#include <backplane/backplane.h>

#include <fmt/format.h>

#include <algorithm>

namespace bp::detail {
namespace {

bool same_view(const Tensor& a, const Tensor& b) {
  return a.impl()->storage().get() == b.impl()->storage().get() &&
         a.storage_offset() == b.storage_offset() && a.dtype() == b.dtype() &&
         std::ranges::equal(a.sizes(), b.sizes()) && std::ranges::equal(a.strides(), b.strides());
}

}  // namespace

ByteSpan byte_span(const Tensor& t) {
  int64_t low = 0, high = 0;  // element offsets of the farthest elements from the first
  const IntArrayRef sizes = t.sizes(), strides = t.strides();
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t extent = (sizes[d] - 1) * strides[d];
    (extent < 0 ? low : high) += extent;
  }
  const auto element = static_cast<int64_t>(t.element_size());
  return {(t.storage_offset() + low) * element, (t.storage_offset() + high + 1) * element};
}

bool may_share_memory(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0 || a.device() != b.device()) return false;
  const StorageImpl* a_storage = a.impl()->storage().get();
  const StorageImpl* b_storage = b.impl()->storage().get();
  int64_t a_base = 0, b_base = 0;
  if (a_storage != b_storage) {
    if (!a.device().is_cpu()) return false;
    a_base = static_cast<int64_t>(reinterpret_cast<intptr_t>(a_storage->data()));
    b_base = static_cast<int64_t>(reinterpret_cast<intptr_t>(b_storage->data()));
  }
  const ByteSpan x = byte_span(a), y = byte_span(b);
  return a_base + x.begin < b_base + y.end && b_base + y.begin < a_base + x.end;
}

OutArg::OutArg(Tensor& given, const OutputSpec& spec, Kind kind, const char* op, const char* arg,
               const ReadTensors& inputs, Aliasing aliasing)
    : given_(given) {
  if (!given.defined()) {
    throw Error(fmt::format("{}: argument '{}' is an undefined tensor; pass a tensor to write to",
                            op, arg));
  }
  if (spec.device && given.device() != *spec.device) {
    throw Error(
        fmt::format("{}: argument '{}' is on {}, but the result is computed on {}; pass "
                    "an output on {}",
                    op, arg, given.device().str(), spec.device->str(), spec.device->str()));
  }
  if (DimVector(given.sizes()) != spec.sizes) {
    if (kind == Kind::InPlace) {
      throw Error(
          fmt::format("{}: the result has shape {}, but '{}', which it is written to in "
                      "place, has shape {}",
                      op, format_shape(spec.sizes), arg, format_shape(given.sizes())));
    }
    if (given.numel() != 0) {
      throw Error(
          fmt::format("{}: argument '{}' has shape {}, but the result has shape {}; pass "
                      "an output of that shape, or an empty one to be resized",
                      op, arg, format_shape(given.sizes()), format_shape(spec.sizes)));
    }
    given_ = empty(spec.sizes, given.dtype(), given.device());
  }
  if (given_.dtype() != spec.dtype && !can_cast(spec.dtype, given_.dtype())) {
    throw Error(
        fmt::format("{}: result type {} can't be cast to the desired output type {} of "
                    "argument '{}'",
                    op, dtype_name(spec.dtype), dtype_name(given_.dtype()), arg));
  }
  check_no_internal_overlap(given_.sizes(), given_.strides(), op, arg);
  // Kernels write contiguous outputs of the computed dtype, into memory no input they read lies
  // in (but where the op allows); anything else goes through a temporary that finish() copies
  // over.
  bool overlaps = false;
  inputs.for_each([&](const Tensor& input) {
    if (overlaps || !may_share_memory(given_, input)) return;
    overlaps = !(aliasing == Aliasing::SameView && same_view(given_, input));
  });
  if (given_.dtype() != spec.dtype || !given_.is_contiguous() || overlaps) {
    temporary_ = empty(spec.sizes, spec.dtype, given_.device());
  }
}

void OutArg::finish() {
  if (temporary_.defined()) given_.copy_(temporary_);
}

}  // namespace bp::detail
