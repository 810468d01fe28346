// Hot loops compiled three times: for x86-64-v4 (AVX-512), for x86-64-v3 (AVX2 with FMA, every
// x86 processor since 2013-2015) and for any x86-64 processor; the dynamic loader picks the copy
// the machine supports when the plugin loads (GCC's function multiversioning, resolved through an
// ifunc). The build itself targets plain x86-64, so the plugin runs anywhere; what each copy
// gains is in the backend's README.md.
//
// Put BP_CPU_MULTIVERSIONED on a function whose body runs a kernel's loops: `flatten` inlines
// every call inside it, so the loops (and the element functions they call) are compiled for
// each target. The x86-64-v3 and -v4 copies fuse multiplies and adds (-ffp-contract=fast), so
// results may differ in the last bit from the baseline copy's; on one machine they never depend
// on the thread count, because work is split at multiples of 64 elements or at whole rows and
// groups (parallel_elements.h, reduction_loops.h), so every element takes the same path through
// the same loop, vector body or scalar tail, however many threads share it.
//
// A ThreadSanitizer build compiles one copy: the ifunc resolvers run while the dynamic loader
// is still relocating the plugin, and their instrumentation calls into ThreadSanitizer's runtime
// through entries not yet relocated, which crashes the process as the plugin loads.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define BP_CPU_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BP_CPU_THREAD_SANITIZER 1
#endif
#endif

#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && \
    !defined(BP_CPU_THREAD_SANITIZER)
#define BP_CPU_MULTIVERSIONED \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#else
#define BP_CPU_MULTIVERSIONED __attribute__((flatten))
#endif
