// cat: each input is copied into its slice of out along `dim`, converting its dtype to out's
// (the meta step computed the promoted dtype and out's shape).
#include "CPUNativeFunctions.h"

#include "copy.h"
#include "reduction.h"

#include <cstdint>
#include <span>

namespace bp::cpu {

void cat_out(std::span<const TensorView> tensors, int64_t dim, const TensorView& out) {
  dim = wrap_dim("cat", dim, out.dim());
  char* const out_bytes = out.data<char>();
  const int64_t slice_step_bytes =
      out.stride(dim) * static_cast<int64_t>(element_size(out.dtype()));
  int64_t offset = 0;  // where the next input starts along dim
  for (const TensorView& tensor : tensors) {
    // An empty input contributes nothing; this also skips PyTorch's legacy 1-d empty tensors,
    // whose shape need not match the others.
    if (tensor.numel() == 0) continue;
    copy_elements(tensor.sizes(),
                  {out_bytes + offset * slice_step_bytes, out.dtype(), out.strides()},
                  elements_of(tensor));
    offset += tensor.size(dim);
  }
}

}  // namespace bp::cpu
