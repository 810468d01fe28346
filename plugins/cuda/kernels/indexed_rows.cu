// Launches of index_add's and embedding_dense_backward's sums (indexed_rows.cuh): the index
// checked, its positions sorted by row with CUB's stable radix sort, each row's first position
// found, then one thread per element of out.
#include "kernels/cuda_call.h"
#include "kernels/indexed_rows.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <bit>

namespace bp::cuda {
namespace {

// The value at the first position of the index outside [0, rows), if any; waits for the check.
std::optional<int64_t> first_bad_index(const IndexedRows& r, const LaunchTarget& target,
                                       GroupScratch& scratch) {
  auto* error = static_cast<IndexError*>(scratch.allocate(sizeof(IndexError)));
  check_cuda(cudaMemsetAsync(error, 0xFF, sizeof(IndexError), target.stream),
             "clearing the index check's record");
  check_row_indices<<<grid_blocks(r.n, kIndexedRowThreads, target), kIndexedRowThreads, 0,
                      target.stream>>>(r.index, r.n, r.rows, error);
  check_launch("check_row_indices");
  IndexError found{};
  check_cuda(cudaMemcpyAsync(&found, error, sizeof found, cudaMemcpyDeviceToHost, target.stream),
             "reading the index check's record");
  check_cuda(cudaStreamSynchronize(target.stream), "waiting for the index check");
  if (found.first_position == kNoIndexError) return std::nullopt;
  int64_t value = 0;
  check_cuda(cudaMemcpyAsync(&value, r.index + found.first_position, sizeof value,
                             cudaMemcpyDeviceToHost, target.stream),
             "reading the index out of range");
  check_cuda(cudaStreamSynchronize(target.stream), "reading the index out of range");
  return value;
}

// starts (rows + 1 entries): where each row's positions begin in `positions`, the index's
// positions sorted by row, stably.
void sort_positions(const IndexedRows& r, int64_t* positions, int64_t* starts,
                    const LaunchTarget& target, GroupScratch& scratch) {
  if (r.n == 0) {
    check_cuda(cudaMemsetAsync(starts, 0, static_cast<size_t>(r.rows + 1) * sizeof(int64_t),
                               target.stream),
               "clearing the rows' starts");
    return;
  }
  const auto n = static_cast<size_t>(r.n);
  auto* unsorted = static_cast<int64_t*>(scratch.allocate(n * sizeof(int64_t)));
  auto* sorted_rows = static_cast<int64_t*>(scratch.allocate(n * sizeof(int64_t)));
  iota<<<grid_blocks(r.n, kIndexedRowThreads, target), kIndexedRowThreads, 0, target.stream>>>(
      unsorted, r.n);
  check_launch("iota");
  // Only the bits a row number uses (every index is in [0, rows) by now).
  const int end_bit = std::max(1, static_cast<int>(std::bit_width(static_cast<uint64_t>(r.rows))));
  size_t temporary_bytes = 0;
  check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, temporary_bytes, r.index, sorted_rows,
                                             unsorted, positions, r.n, 0, end_bit, target.stream),
             "sizing the sort of the index");
  void* temporary = scratch.allocate(std::max<size_t>(temporary_bytes, 1));
  check_cuda(cub::DeviceRadixSort::SortPairs(temporary, temporary_bytes, r.index, sorted_rows,
                                             unsorted, positions, r.n, 0, end_bit, target.stream),
             "sorting the index");
  row_starts<<<grid_blocks(r.n + 1, kIndexedRowThreads, target), kIndexedRowThreads, 0,
               target.stream>>>(sorted_rows, r.n, r.rows, starts);
  check_launch("row_starts");
}

}  // namespace

template <typename Kernel>
std::optional<int64_t> launch_indexed_row_sums(DType dtype, const IndexedRows& r,
                                               const LaunchTarget& target, GroupScratch& scratch) {
  std::optional<int64_t> bad;
  // Every index is checked, also where out is empty, as on the CPU backend.
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    using C = compute_t<T>;
    if (r.n > 0) bad = first_bad_index(r, target, scratch);
    const int64_t total = r.outer * r.rows * r.inner;
    if (bad || total == 0) return;
    auto* positions =
        static_cast<int64_t*>(scratch.allocate(std::max<size_t>(1, r.n) * sizeof(int64_t)));
    auto* starts =
        static_cast<int64_t*>(scratch.allocate(static_cast<size_t>(r.rows + 1) * sizeof(int64_t)));
    sort_positions(r, positions, starts, target, scratch);
    const RowSums<C> shape{r.outer,         r.rows,      r.n,           r.inner,
                           r.alpha.to<C>(), r.embedding, r.padding_row, r.scale_by_frequency};
    indexed_row_sums<T>
        <<<grid_blocks(total, kIndexedRowThreads, target), kIndexedRowThreads, 0, target.stream>>>(
            shape, starts, positions, static_cast<const T*>(r.base),
            static_cast<const T*>(r.source), static_cast<T*>(r.out), total);
    check_launch("indexed_row_sums");
  });
  return bad;
}

template std::optional<int64_t> launch_indexed_row_sums<kernel_dtypes::index_add_out>(
    DType, const IndexedRows&, const LaunchTarget&, GroupScratch&);
template std::optional<int64_t>
launch_indexed_row_sums<kernel_dtypes::embedding_dense_backward_out>(DType, const IndexedRows&,
                                                                     const LaunchTarget&,
                                                                     GroupScratch&);

}  // namespace bp::cuda
