// Software prefetching for kernels that stream through memory: the next rows of a row kernel,
// prefetched during a pass over the current ones, and arrays read ahead of a streaming loop.
#pragma once

#include <algorithm>
#include <cstdint>

namespace bp::cpu {

// The rows a kernel works on next, for row kernels that read and write each row in several
// passes: prefetching the next rows during the arithmetic of one pass overlaps their memory
// traffic with it, which the hardware prefetcher, following only the current row, does not.
template <typename C>
struct NextRows {
  const C* input = nullptr;  // null: there is no next row
  C* output = nullptr;

  // Asks for the cache lines of element i of both next rows (the output's for writing).
  void prefetch(int64_t i) const {
    if (input == nullptr) return;
    __builtin_prefetch(input + i, 0);
    __builtin_prefetch(output + i, 1);
  }
};

// Calls body(begin, end) over [0, count) in blocks of kPrefetchBlock bytes of C, prefetching
// the same block of `next` before each: a loop in body vectorises as if it ran over all of
// [0, count), and the blocks are long enough to pay for its set-up.
inline constexpr int64_t kPrefetchBlock = 256;

template <typename C, typename Body>
void for_each_block_prefetching(int64_t count, const NextRows<C>& next, Body&& body) {
  constexpr int64_t kBlock = kPrefetchBlock / sizeof(C);
  constexpr int64_t kLine = 64 / sizeof(C);
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    for (int64_t line = 0; line < kBlock; line += kLine) next.prefetch(begin + line);
    body(begin, std::min(count, begin + kBlock));
  }
}

// How far ahead of a loop streaming through memory its reads are prefetched: one core's
// hardware prefetcher alone keeps too few lines in flight to reach the memory's bandwidth.
inline constexpr int64_t kReadAheadBytes = 4096;
// The stretch of each array that one round of such prefetches covers.
inline constexpr int64_t kReadAheadBlock = 1024;

// Calls body(begin, end) over [0, count) in blocks of kReadAheadBlock bytes of the widest
// array, first prefetching each array's lines kReadAheadBytes beyond the block: for loops that
// stream through arrays in memory. (Prefetching past an array's end is harmless: prefetches
// never fault.) Block boundaries depend only on count.
template <typename Body, typename... T>
void for_each_block_reading_ahead(int64_t count, Body&& body, const T*... arrays) {
  constexpr auto kBlock = static_cast<int64_t>(kReadAheadBlock / std::max({sizeof(T)...}));
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    const auto read_ahead = [begin](const auto* array) {
      const char* const block = reinterpret_cast<const char*>(array + begin) + kReadAheadBytes;
      for (int64_t line = 0; line < kReadAheadBlock; line += 64) __builtin_prefetch(block + line);
    };
    (read_ahead(arrays), ...);
    body(begin, std::min(count, begin + kBlock));
  }
}

}  // namespace bp::cpu
