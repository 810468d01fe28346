#include "mpi_calls.h"

#include <fmt/format.h>

#include <string>

namespace bp::distributed::detail {

DType wire_dtype(DType dtype, bool reduces) {
  if (reduces && (dtype == kFloat16 || dtype == kBFloat16)) return kFloat32;
  return dtype;
}

MPI_Datatype mpi_datatype(DType dtype) {
  switch (dtype) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int8: return MPI_INT8_T;
    case DType::UInt8:
    case DType::Bool: return MPI_UINT8_T;
    case DType::Int32: return MPI_INT32_T;
    case DType::Int64: return MPI_INT64_T;
    case DType::Float16:
    case DType::BFloat16: return MPI_UINT16_T;  // moved, never reduced (see wire_dtype)
  }
  throw DistributedError(fmt::format("no MPI datatype for dtype {}", static_cast<int>(dtype)), {});
}

MPI_Op mpi_op(ReduceOp op, DType dtype) {
  if (dtype == kBool) return op == ReduceOp::Min ? MPI_LAND : MPI_LOR;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean: return MPI_SUM;
    case ReduceOp::Max: return MPI_MAX;
    case ReduceOp::Min: return MPI_MIN;
  }
  throw DistributedError("unknown reduction", {});
}

void check_mpi(int code, std::string_view call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw DistributedError(fmt::format("{} failed: {}", call,
                                     length > 0 ? std::string(text, static_cast<size_t>(length))
                                                : fmt::format("MPI error code {}", code)),
                         {});
}

}  // namespace bp::distributed::detail
