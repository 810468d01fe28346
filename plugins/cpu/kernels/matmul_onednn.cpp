// Matrix products through oneDNN's matmul primitive. Operands are described to oneDNN with
// their own strides, so transposed and sliced matrices are read in place; only a layout the
// gemm cannot read (neither dimension unit-stride, overlapping, or a repeated batch) costs a
// copy or a loop over batches. The addend of addmm is fused: a repeated row (linear's bias)
// becomes the primitive's bias, a full matrix a binary post-op or a sum post-op.
#include "kernels/matmul_problem.h"

#include "runtime/onednn.h"
#include "runtime/onednn_memory.h"
#include "runtime/primitive_cache.h"
#include "runtime/scratch_buffer.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <unordered_map>
#include <utility>

namespace bp::cpu {
namespace {

using dnnl::memory;

// How the addend of out = alpha * (a @ b) + beta * addend reaches the primitive.
enum class AddendFusion : int64_t {
  None,    // no addend, or beta == 0
  Bias,    // a repeated unit-stride row and beta == alpha (linear: both 1): the bias (1, m)
           // since oneDNN scales the sum of product and bias by alpha
  Binary,  // a repeated row or one value (copied as float32 times beta unless beta == 1 and
           // it is a unit-stride row), or with beta == 1 a row-major matrix: added after the
           // product is scaled, by a binary post-op
  Sum,     // anything else: out holds the addend first, and the sum post-op scales it by beta
};

// The same elements, with the strides of size-1 dimensions rewritten to what a plain layout
// would have, so that a row or column cut from a transposed matrix reads as a plain one.
MatrixOperand normalized(MatrixOperand m) {
  if (m.rows == 1 && m.cols == 1) {
    m.row_stride = m.col_stride = 1;
  } else if (m.rows == 1) {
    m.row_stride = m.col_stride == 1 ? m.cols : 1;
  } else if (m.cols == 1) {
    m.col_stride = m.row_stride == 1 ? m.rows : 1;
  }
  if (m.batch == 1) m.batch_stride = std::max(m.rows * m.row_stride, m.cols * m.col_stride);
  return m;
}

// No two elements share memory: oneDNN refuses descriptors that overlap. Dimensions sorted by
// stride must each step over the whole extent of the next.
bool non_overlapping(const MatrixOperand& m) {
  std::array<std::pair<int64_t, int64_t>, 3> dims = {
      {{m.batch_stride, m.batch}, {m.row_stride, m.rows}, {m.col_stride, m.cols}}};
  std::sort(dims.begin(), dims.end(), std::greater<>());
  int64_t extent = 0;  // of the dimensions inside the current one
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    const auto [stride, size] = *it;
    if (size == 1) continue;
    if (stride < std::max<int64_t>(extent, 1)) return false;
    extent = stride * size;
  }
  return true;
}

bool row_major(const MatrixOperand& m) { return m.col_stride == 1 && m.row_stride >= m.cols; }
bool column_major(const MatrixOperand& m) { return m.row_stride == 1 && m.col_stride >= m.rows; }

// What oneDNN's gemm-based matmul reads in place (any other layout selects its slow reference
// implementation, or no implementation at all).
bool gemm_reads(const MatrixOperand& m) {
  return (row_major(m) || column_major(m)) && non_overlapping(m);
}
bool gemm_writes(const MatrixOperand& m) { return row_major(m) && non_overlapping(m); }

template <typename Fn>
void visit_onednn_type(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn(TypeTag<float>{});
    case DType::Float16: return fn(TypeTag<Half>{});
    case DType::BFloat16: return fn(TypeTag<BFloat16>{});
    default: throw Error(BP_STATUS_INTERNAL, "matmul: oneDNN was asked for a dtype it lacks");
  }
}

// A dense row-major copy of an operand oneDNN cannot address as it is.
class StagedMatrix {
 public:
  StagedMatrix(const MatrixOperand& source, DType dtype)
      : buffer_(static_cast<size_t>(source.batch * source.rows * source.cols) *
                element_size(dtype)),
        dtype_(dtype) {
    dense_ = source;
    dense_.data = buffer_.data();
    dense_.col_stride = 1;
    dense_.row_stride = source.cols;
    dense_.batch_stride = source.rows * source.cols;
    dense_ = normalized(dense_);
  }

  const MatrixOperand& dense() const { return dense_; }
  void copy_from(const MatrixOperand& source) const { copy(source, dense_); }
  void copy_to(const MatrixOperand& target) const { copy(dense_, target); }

 private:
  void copy(const MatrixOperand& from, const MatrixOperand& to) const {
    visit_onednn_type(dtype_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      convert_matrix<T, T>(from, to);
    });
  }

  ScratchBuffer buffer_;
  DType dtype_;
  MatrixOperand dense_;
};

memory::desc matrix_desc(const MatrixOperand& m, memory::data_type type, bool batched) {
  if (batched) {
    const int64_t sizes[] = {m.batch, m.rows, m.cols};
    const int64_t strides[] = {m.batch_stride, m.row_stride, m.col_stride};
    return onednn::strided_desc(sizes, strides, type);
  }
  const int64_t sizes[] = {m.rows, m.cols};
  const int64_t strides[] = {m.row_stride, m.col_stride};
  return onednn::strided_desc(sizes, strides, type);
}

void add_to_key(onednn::CacheKey& key, const MatrixOperand& m) {
  key.add(m.batch).add(m.rows).add(m.cols);
  key.add(m.batch_stride).add(m.row_stride).add(m.col_stride);
}

bool same_elements(const MatrixOperand& x, const MatrixOperand& y) {
  return x.data == y.data && x.batch == y.batch && x.rows == y.rows && x.cols == y.cols &&
         x.batch_stride == y.batch_stride && x.row_stride == y.row_stride &&
         x.col_stride == y.col_stride;
}

// The addend as a binary post-op's second source: dimensions it repeats along have size 1.
MatrixOperand binary_source(MatrixOperand addend) {
  if (addend.batch_stride == 0) addend.batch = 1;
  if (addend.row_stride == 0) addend.rows = 1;
  if (addend.col_stride == 0) addend.cols = 1;
  return normalized(addend);
}

AddendFusion choose_fusion(const MatmulProblem& problem, const MatrixOperand& out) {
  if (!problem.addend) return AddendFusion::None;
  const MatrixOperand& addend = *problem.addend;
  const double alpha = problem.alpha.to<double>();
  const double beta = problem.beta.to<double>();
  if (beta == 0) return AddendFusion::None;
  const MatrixOperand source = binary_source(normalized(addend));
  const bool repeated_row = source.batch == 1 && source.rows == 1;
  if (out.batch == 1 && repeated_row && source.cols == out.cols && alpha == beta &&
      row_major(source)) {
    return AddendFusion::Bias;
  }
  if (repeated_row) return AddendFusion::Binary;
  // In place (addmm_): out holds the addend already, and a binary post-op would read elements
  // the product has overwritten.
  if (same_elements(normalized(addend), out)) return AddendFusion::Sum;
  if (beta == 1 && source.batch == out.batch && source.rows == out.rows &&
      source.cols == out.cols && row_major(source) && non_overlapping(source)) {
    return AddendFusion::Binary;
  }
  return AddendFusion::Sum;
}

struct MatmulPrimitives final : onednn::CachedPrimitives {
  dnnl::matmul primitive;
  memory::desc scratchpad;
};

// The primitive's operands for one call, owning whatever had to be staged.
struct PreparedOperands {
  MatrixOperand a, b, out;
  std::optional<StagedMatrix> staged_a, staged_b, staged_out;
  AddendFusion fusion = AddendFusion::None;
  // The bias, or the binary post-op's source.
  memory::desc addend_desc;
  const void* addend_data = nullptr;
  std::optional<ScratchBuffer> staged_addend;
};

// A repeated row (or one value) of the addend as a float32 row times beta, for the binary
// post-op.
void stage_scaled_row(const MatmulProblem& problem, const MatrixOperand& row,
                      PreparedOperands& ops) {
  const double beta = problem.beta.to<double>();
  ops.staged_addend.emplace(static_cast<size_t>(row.cols) * sizeof(float));
  auto* scaled = ops.staged_addend->as<float>();
  visit_onednn_type(problem.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* values = static_cast<const T*>(row.data);
    for (int64_t j = 0; j < row.cols; ++j) {
      scaled[j] = static_cast<float>(beta * static_cast<float>(values[j * row.col_stride]));
    }
  });
  const int64_t sizes[] = {1, row.cols};
  const int64_t strides[] = {row.cols, 1};
  ops.addend_desc = onednn::strided_desc(sizes, strides, memory::data_type::f32);
  ops.addend_data = scaled;
}

void prepare_addend(const MatmulProblem& problem, PreparedOperands& ops, memory::data_type type) {
  const MatrixOperand& addend = *problem.addend;
  const MatrixOperand source = binary_source(normalized(addend));
  switch (ops.fusion) {
    case AddendFusion::None: return;
    case AddendFusion::Bias:
      ops.addend_desc = matrix_desc(source, type, /*batched=*/false);
      ops.addend_data = source.data;
      return;
    case AddendFusion::Binary:
      if (source.rows == 1 && !(problem.beta.to<double>() == 1 && row_major(source))) {
        return stage_scaled_row(problem, source, ops);
      }
      ops.addend_desc = matrix_desc(source, type, ops.out.batch > 1);
      ops.addend_data = source.data;
      return;
    case AddendFusion::Sum:
      if (!same_elements(normalized(addend), ops.out)) {
        visit_onednn_type(problem.dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          convert_matrix<T, T>(addend, ops.out);
        });
      }
      return;
  }
}

// Fills `ops` (which owns what it stages, so it is filled in place).
void prepare(const MatmulProblem& problem, memory::data_type type, PreparedOperands& ops) {
  ops.a = normalized(problem.a);
  ops.b = normalized(problem.b);
  ops.out = normalized(problem.out);
  if (!gemm_reads(ops.a)) {
    ops.staged_a.emplace(ops.a, problem.dtype);
    ops.staged_a->copy_from(ops.a);
    ops.a = ops.staged_a->dense();
  }
  if (!gemm_reads(ops.b)) {
    ops.staged_b.emplace(ops.b, problem.dtype);
    ops.staged_b->copy_from(ops.b);
    ops.b = ops.staged_b->dense();
  }
  if (!gemm_writes(ops.out)) {
    ops.staged_out.emplace(ops.out, problem.dtype);
    ops.out = ops.staged_out->dense();
  }
  ops.fusion = choose_fusion(problem, ops.out);
  if (problem.addend) prepare_addend(problem, ops, type);
}

std::shared_ptr<const MatmulPrimitives> primitives_for(const MatmulProblem& problem,
                                                       const PreparedOperands& ops,
                                                       memory::data_type type) {
  const bool batched = ops.out.batch > 1;
  const float alpha = problem.alpha.to<float>();
  const float beta = problem.beta.to<float>();
  onednn::CacheKey key(onednn::PrimitiveKind::Matmul);
  key.add(static_cast<int64_t>(type));
  add_to_key(key, ops.a);
  add_to_key(key, ops.b);
  add_to_key(key, ops.out);
  key.add(static_cast<int64_t>(ops.fusion)).add(static_cast<double>(alpha));
  if (ops.fusion == AddendFusion::Sum) key.add(static_cast<double>(beta));
  key.add(static_cast<int64_t>(problem.activation));
  if (ops.fusion == AddendFusion::Bias || ops.fusion == AddendFusion::Binary) {
    key.add(static_cast<int64_t>(ops.addend_desc.data_type()));
    key.add(std::span<const int64_t>(ops.addend_desc.dims()));
    key.add(std::span<const int64_t>(ops.addend_desc.data.format_desc.blocking.strides,
                                     static_cast<size_t>(ops.addend_desc.data.ndims)));
  }

  return onednn::primitive_cache().get<MatmulPrimitives>(key, [&] {
    dnnl::primitive_attr attributes = onednn::base_attributes();
    if (alpha != 1) attributes.set_output_scales(0, {alpha});
    dnnl::post_ops post_ops;
    if (ops.fusion == AddendFusion::Sum) post_ops.append_sum(beta);
    if (ops.fusion == AddendFusion::Binary) {
      post_ops.append_binary(dnnl::algorithm::binary_add, ops.addend_desc);
    }
    // After the addend, so that the activation sees the whole sum, as the loops apply it.
    if (problem.activation == Activation::Relu) {
      post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    } else if (problem.activation == Activation::GeluTanh) {
      post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
    }
    attributes.set_post_ops(post_ops);
    const memory::desc src = matrix_desc(ops.a, type, batched);
    const memory::desc weights = matrix_desc(ops.b, type, batched);
    const memory::desc dst = matrix_desc(ops.out, type, batched);
    const dnnl::matmul::desc description =
        ops.fusion == AddendFusion::Bias ? dnnl::matmul::desc(src, weights, ops.addend_desc, dst)
                                         : dnnl::matmul::desc(src, weights, dst);
    const dnnl::matmul::primitive_desc descriptor(description, attributes, onednn::engine());
    auto made = std::make_shared<MatmulPrimitives>();
    made->primitive = dnnl::matmul(descriptor);
    made->scratchpad = descriptor.scratchpad_desc();
    return std::shared_ptr<const MatmulPrimitives>(std::move(made));
  });
}

void run(const MatmulProblem& problem, memory::data_type type) {
  PreparedOperands ops;
  prepare(problem, type, ops);
  const bool batched = ops.out.batch > 1;
  const onednn::ThreadCountScope threads;
  const std::shared_ptr<const MatmulPrimitives> primitives = primitives_for(problem, ops, type);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, onednn::wrap(matrix_desc(ops.a, type, batched), ops.a.data)},
      {DNNL_ARG_WEIGHTS, onednn::wrap(matrix_desc(ops.b, type, batched), ops.b.data)},
      {DNNL_ARG_DST, onednn::wrap(matrix_desc(ops.out, type, batched), ops.out.data)},
  };
  if (ops.fusion == AddendFusion::Bias) {
    args.emplace(DNNL_ARG_BIAS, onednn::wrap(ops.addend_desc, ops.addend_data));
  }
  if (ops.fusion == AddendFusion::Binary) {
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                 onednn::wrap(ops.addend_desc, ops.addend_data));
  }
  onednn::execute(primitives->primitive, primitives->scratchpad, std::move(args));
  if (ops.staged_out) ops.staged_out->copy_to(normalized(problem.out));
}

}  // namespace

bool onednn_matmul_supports(DType dtype) {
  static const onednn::TypeSupport support([](memory::data_type type) {
    const memory::desc matrix({2, 2}, type, memory::format_tag::ab);
    dnnl::matmul::primitive_desc(dnnl::matmul::desc(matrix, matrix, matrix),
                                 onednn::base_attributes(), onednn::engine());
  });
  return support.implements(dtype);
}

void onednn_matmul(const MatmulProblem& problem) {
  const memory::data_type type = *onednn::data_type_of(problem.dtype);
  // A matrix repeated over the batch (bmm's operands after matmul broadcast them) has no gemm
  // layout: one 2-D product per batch, all through one cached primitive.
  if (problem.batch() > 1 && (problem.a.batch_stride == 0 || problem.b.batch_stride == 0)) {
    for (int64_t b = 0; b < problem.batch(); ++b) run(problem.slice(b, 0, problem.n()), type);
    return;
  }
  run(problem, type);
}

}  // namespace bp::cpu
