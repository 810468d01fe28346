#include "tensor/type_promotion.h"

#include <optional>

namespace bp::detail {
namespace {

// Rank inside a category: a wider type of the same category ranks higher.
int float_rank(DType t) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16: return 0;
    case DType::Float32: return 1;
    default: return 2;  // Float64
  }
}

std::optional<DType> promote_optional(std::optional<DType> a, DType b) {
  return a ? promote_types(*a, b) : b;
}

// PyTorch's combine_categories: `higher` comes from a higher-ranked group of participants;
// `lower` counts only when it belongs to a higher category than `higher`.
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower || is_floating_point(*higher)) return higher;
  if (*higher == DType::Bool || is_floating_point(*lower)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const bool a_float = is_floating_point(a);
  const bool b_float = is_floating_point(b);
  if (a_float && b_float) {
    if (float_rank(a) == float_rank(b)) return DType::Float32;  // Float16 with BFloat16
    return float_rank(a) > float_rank(b) ? a : b;
  }
  if (a_float) return a;
  if (b_float) return b;
  // Both integers. Only UInt8 is unsigned: with a signed type of its size it needs a wider one.
  if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8)) {
    return DType::Int32;
  }
  return element_size(a) > element_size(b) ? a : b;
}

namespace {

// Tensors is a range of const Tensor& or of std::reference_wrapper<const Tensor>.
template <typename Tensors>
DType result_type_of(const Tensors& tensors) {
  std::optional<DType> dimensioned, zero_dim, wrapped;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    if (t.impl()->is_wrapped_number()) {
      wrapped = promote_optional(wrapped, is_floating_point(t.dtype()) ? kFloat32 : t.dtype());
    } else if (t.dim() == 0) {
      zero_dim = promote_optional(zero_dim, t.dtype());
    } else {
      dimensioned = promote_optional(dimensioned, t.dtype());
    }
  }
  return combine_categories(dimensioned, combine_categories(zero_dim, wrapped)).value_or(kFloat32);
}

}  // namespace

DType result_type(std::span<const Tensor> tensors) { return result_type_of(tensors); }

DType result_type(std::initializer_list<std::reference_wrapper<const Tensor>> tensors) {
  return result_type_of(tensors);
}

bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && is_integral(to, /*include_bool=*/false)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

}  // namespace bp::detail
