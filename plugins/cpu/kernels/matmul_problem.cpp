// Slicing a matrix product into one batch and a range of rows (matmul_problem.h).
#include "kernels/matmul_problem.h"

namespace bp::cpu {

MatrixOperand MatrixOperand::slice(int64_t b, int64_t row_begin, int64_t row_end,
                                   size_t element_size) const {
  MatrixOperand part = *this;
  part.data = static_cast<char*>(data) + static_cast<ptrdiff_t>(offset(b, row_begin, 0)) *
                                             static_cast<ptrdiff_t>(element_size);
  part.batch = 1;
  part.rows = row_end - row_begin;
  return part;
}

MatmulProblem MatmulProblem::slice(int64_t b, int64_t row_begin, int64_t row_end) const {
  const size_t bytes = element_size(dtype);
  MatmulProblem part = *this;
  part.a = a.slice(b, row_begin, row_end, bytes);
  part.b = this->b.slice(b, 0, this->b.rows, bytes);
  part.out = out.slice(b, row_begin, row_end, bytes);
  if (addend) part.addend = addend->slice(b, row_begin, row_end, bytes);
  return part;
}

}  // namespace bp::cpu
