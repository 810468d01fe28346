// Strided copies between any two dtypes (copy_, cat, contiguous), in one program per device:
// copy_<from>_to_<to> for each pair, in the two forms of ELEMENTWISE_KERNEL. The value
// converts as a C++ static_cast from the source's compute type, as in the CPU backend.
// Same-dtype copies use copy_bits<width>, which moves bits unchanged (NaN payloads included), as
// do gathers (gather_bits<width>).

// `types` is (from, to).
#define COPY_FROM(from, to) from
#define COPY_TO(from, to) to
#define COPY_PARAMS(P, types)                       \
  P(__global CONCAT(STORAGE_, COPY_TO types), out), \
      P(__global const CONCAT(STORAGE_, COPY_FROM types), src)
#define COPY_BODY(AT, types) \
  CONCAT(STORE_, COPY_TO types)(out, AT(out), CONCAT(LOAD_, COPY_FROM types)(src, AT(src)));
#define COPY_KERNEL(from, to) \
  ELEMENTWISE_KERNEL(copy_##from##_to_##to, COPY_PARAMS, COPY_BODY, (from, to))

#ifdef HAS_FP64
#define COPY_TO_FLOAT64(from) COPY_KERNEL(from, float64)
#else
#define COPY_TO_FLOAT64(from)
#endif

#define COPIES_FROM(from)     \
  COPY_KERNEL(from, float32)  \
  COPY_TO_FLOAT64(from)       \
  COPY_KERNEL(from, float16)  \
  COPY_KERNEL(from, bfloat16) \
  COPY_KERNEL(from, int8)     \
  COPY_KERNEL(from, uint8)    \
  COPY_KERNEL(from, int32)    \
  COPY_KERNEL(from, int64)    \
  COPY_KERNEL(from, bool)

COPIES_FROM(float32)
#ifdef HAS_FP64
COPIES_FROM(float64)
#endif
COPIES_FROM(float16)
COPIES_FROM(bfloat16)
COPIES_FROM(int8)
COPIES_FROM(uint8)
COPIES_FROM(int32)
COPIES_FROM(int64)
COPIES_FROM(bool)

#define BITS_PARAMS(P, type) P(__global type, out), P(__global const type, src)
#define BITS_BODY(AT, type) out[AT(out)] = src[AT(src)];
ELEMENTWISE_KERNEL(copy_bits8, BITS_PARAMS, BITS_BODY, uchar)
ELEMENTWISE_KERNEL(copy_bits16, BITS_PARAMS, BITS_BODY, ushort)
ELEMENTWISE_KERNEL(copy_bits32, BITS_PARAMS, BITS_BODY, uint)
ELEMENTWISE_KERNEL(copy_bits64, BITS_PARAMS, BITS_BODY, ulong)

// Gathering rows, by width, for embedding and index_select: out = src at src's offset plus
// `step` times the index. The host gives src stride 0 along the gathered dim and index stride 0
// along the others, and has checked every index.
#define GATHER_PARAMS(P, type) \
  P(__global type, out), P(__global const type, src), P(__global const long, index), const long step
#define GATHER_BODY(AT, type) out[AT(out)] = src[AT(src) + index[AT(index)] * step];
ELEMENTWISE_KERNEL(gather_bits8, GATHER_PARAMS, GATHER_BODY, uchar)
ELEMENTWISE_KERNEL(gather_bits16, GATHER_PARAMS, GATHER_BODY, ushort)
ELEMENTWISE_KERNEL(gather_bits32, GATHER_PARAMS, GATHER_BODY, uint)
ELEMENTWISE_KERNEL(gather_bits64, GATHER_PARAMS, GATHER_BODY, ulong)
