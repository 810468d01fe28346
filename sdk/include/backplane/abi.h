/*
 * Backplane plugin ABI.
 *
 * This header is the whole contract between libbackplane (the core) and a device backend
 * plugin. It is plain C so that a plugin built with another compiler or C++ standard library
 * still loads. No C++ type, exception or allocator crosses it.
 *
 * Versioning: a plugin reports the ABI version it was built against. The core refuses a plugin
 * whose major version differs from its own. A plugin built against an older minor version
 * loads: every struct passed by pointer begins with `struct_size`, and the core treats fields
 * that lie past the plugin's `struct_size` as absent. A descriptor shorter than the version it
 * claims (a 1.2 plugin's that ends before the event functions) is refused, since the core
 * would otherwise drop fields the plugin set. A plugin built against a newer minor version
 * loads too; the core ignores the fields it does not know.
 *
 * Minor versions: 1.0 is the first; 1.1 added bp_counter, bp_plugin::read_counters and the
 * kernel argument type bp_optional_float (schema `float?`); 1.2 added events (bp_event and the
 * bp_plugin::event_* functions); 1.3 added the core's services to plugins (bp_core_services,
 * bp_log_level and bp_plugin::attach_core); 1.4 added bp_plugin::dlpack_device_type; 1.5 added
 * bp_core_services::storage_version; 1.6 added collectives (bp_collectives, bp_communicator,
 * bp_reduction and bp_plugin::collectives).
 *
 * The small value types passed *by value* to kernels (bp_scalar and the list/optional structs)
 * carry no `struct_size`: their layout is frozen for a major version, because a kernel's C
 * signature is part of its schema hash.
 */
#ifndef BACKPLANE_ABI_H_
#define BACKPLANE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BP_ABI_MAJOR 1
#define BP_ABI_MINOR 6

/* The symbol every plugin exports; its type is bp_plugin_entry_fn. */
#define BP_PLUGIN_ENTRY_SYMBOL "backplane_plugin_entry"

/* DLPack 0.8 added kDLBool = 6; older DLPack headers lack it, so the ABI names it itself. */
#define BP_DL_BOOL_CODE 6

#if defined(_WIN32)
#define BP_PLUGIN_EXPORT __declspec(dllexport)
#else
#define BP_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------------------- */
/* Status                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* What every fallible plugin function returns. On anything but BP_STATUS_OK the plugin's
 * last_error() returns a message describing the failure on the calling thread. */
typedef enum bp_status {
  BP_STATUS_OK = 0,
  BP_STATUS_INVALID_ARGUMENT = 1, /* the arguments break a rule the kernel states */
  BP_STATUS_OUT_OF_MEMORY = 2,    /* the device could not provide the memory asked for */
  BP_STATUS_UNIMPLEMENTED = 3,    /* this device cannot run this case (dtype, layout, ...) */
  BP_STATUS_DEVICE_ERROR = 4,     /* the driver or device reported a failure */
  BP_STATUS_INTERNAL = 5          /* a bug in the plugin: an unexpected exception, say */
} bp_status;

/* ---------------------------------------------------------------------------------------- */
/* Data types                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* Element types. Tensors carry a DLDataType; this enum names the same types for arguments
 * of type `ScalarType` and `ScalarType?`, where BP_DTYPE_NONE stands for None. */
typedef enum bp_dtype {
  BP_DTYPE_NONE = -1,
  BP_DTYPE_FLOAT32 = 0,
  BP_DTYPE_FLOAT64 = 1,
  BP_DTYPE_FLOAT16 = 2,
  BP_DTYPE_BFLOAT16 = 3,
  BP_DTYPE_INT8 = 4,
  BP_DTYPE_UINT8 = 5,
  BP_DTYPE_INT32 = 6,
  BP_DTYPE_INT64 = 7,
  BP_DTYPE_BOOL = 8
} bp_dtype;

/* ---------------------------------------------------------------------------------------- */
/* Kernel argument types (passed by value, frozen per major version)                        */
/* ---------------------------------------------------------------------------------------- */

typedef enum bp_scalar_kind {
  BP_SCALAR_BOOL = 0,
  BP_SCALAR_INT = 1,
  BP_SCALAR_FLOAT = 2
} bp_scalar_kind;

/* A schema `Scalar`: a number whose kind the caller chose. */
typedef struct bp_scalar {
  int32_t kind; /* a bp_scalar_kind */
  union {
    uint8_t b;
    int64_t i;
    double f;
  } value;
} bp_scalar;

/* A schema `int[]`. For `int[]?`, data == NULL means None (an empty list has size 0 and a
 * non-NULL data pointer). */
typedef struct bp_int_list {
  const int64_t* data;
  int64_t size;
} bp_int_list;

/* A schema `int?`. */
typedef struct bp_optional_int {
  int64_t value;
  uint8_t has_value;
} bp_optional_int;

/* A schema `float?`. */
typedef struct bp_optional_float {
  double value;
  uint8_t has_value;
} bp_optional_float;

/* A schema `Tensor[]`. */
typedef struct bp_tensor_list {
  const DLTensor* const* data;
  int64_t size;
} bp_tensor_list;

/*
 * Kernels. A kernel implements one operator overload of core/ops/ops.yaml; its C signature
 * follows from the schema, argument by argument, in schema order:
 *
 *   Tensor          const DLTensor*          Tensor(a!)   DLTensor*
 *   Tensor?         const DLTensor* (NULL = None)
 *   Tensor[]        bp_tensor_list           Scalar       bp_scalar
 *   int             int64_t                  int?         bp_optional_int
 *   int[] / int[]?  bp_int_list              bool         uint8_t
 *   float           double                   float?       bp_optional_float
 *   str             const char* (UTF-8, NUL-terminated)
 *   ScalarType      int32_t (a bp_dtype)     ScalarType?  int32_t (BP_DTYPE_NONE = None)
 *
 * and it returns bp_status. Outputs are allocated by the core with the shape, dtype and device
 * its meta step computed; the kernel only fills them. Inputs arrive already broadcast to the
 * output's shape (as strided views) and converted to the dtype the op computes in.
 * `DLTensor::strides` is never NULL; sizes and strides count elements.
 *
 * The table stores every kernel as bp_kernel_fn; the core casts it back to the signature that
 * the schema hash vouches for.
 */
typedef bp_status (*bp_kernel_fn)(void);

typedef struct bp_kernel {
  size_t struct_size;
  const char* name;     /* "add.out": operator name and overload name, as in ops.yaml */
  uint64_t schema_hash; /* bp_schema_hash() of the schema the kernel was generated from */
  bp_kernel_fn fn;
} bp_kernel;

/* ---------------------------------------------------------------------------------------- */
/* Devices                                                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef struct bp_device_properties {
  size_t struct_size;      /* set by the core; the plugin writes no field past it */
  const char* name;        /* "NVIDIA H100", "pthread-x86_64 (PoCL)"; owned by the plugin */
  const char* description; /* free-form details for bp-info; may be NULL */
  uint64_t total_memory;   /* bytes; 0 if unknown */
} bp_device_properties;

/* ---------------------------------------------------------------------------------------- */
/* Counters (ABI 1.1)                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* One named number a plugin reports about itself: cache hits, misses, sizes. The core allocates
 * an array of these and sets `struct_size` in every entry; the plugin finds entry i at
 * (char*)counters + i * counters[0].struct_size and writes only the fields that lie within
 * `struct_size`, so that a core and a plugin built against different minor versions agree. */
typedef struct bp_counter {
  size_t struct_size; /* set by the core */
  const char* name;   /* "primitive_cache.hits": lower case, '.' between words; owned by the
                         plugin and valid until it is unloaded */
  uint64_t value;     /* the current value: a running count, or a level such as a size */
} bp_counter;

/* ---------------------------------------------------------------------------------------- */
/* Events (ABI 1.2)                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* A point in one device's queue of work. Recording an event marks everything queued on that
 * device so far; the event completes once all of that work has finished. The plugin owns the
 * object behind the handle (a cudaEvent_t, a cl_event marker); the core only passes it back, to
 * the same plugin and device it was created for. */
typedef struct bp_event_object* bp_event;

/* ---------------------------------------------------------------------------------------- */
/* Core services (ABI 1.3)                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* How much a message matters, as BACKPLANE_LOG_LEVEL names it; from most to least severe. */
typedef enum bp_log_level {
  BP_LOG_ERROR = 0,
  BP_LOG_WARN = 1,
  BP_LOG_INFO = 2,
  BP_LOG_DEBUG = 3
} bp_log_level;

/* What the core does for a plugin, handed to it by bp_plugin::attach_core. The core owns the
 * struct and sets `struct_size`; a plugin reads no field past it, since a core of an older
 * minor version than the plugin's offers fewer functions. */
typedef struct bp_core_services {
  size_t struct_size; /* set by the core */
  /* The core's handle for this plugin: the first argument of every function below. */
  void* context;
  /* Reports `message` (UTF-8, NUL-terminated; the core copies it before returning), such as a
   * BACKPLANE_* value the plugin cannot use, at `level` (a bp_log_level; any other value counts
   * as BP_LOG_WARN). The core puts the plugin's name before it, keeps it in
   * bp::runtime_info().warnings (which bp-info shows) when it is a warning or an error, and
   * writes it to stderr when `level` is at least as severe as BACKPLANE_LOG_LEVEL. May be called
   * from any thread at any time until the process exits, also from within the plugin's init,
   * kernels and shutdown. */
  void (*log)(void* context, int32_t level, const char* message);
  /* ABI 1.5. For caches of what a plugin computes from a tensor's contents (weights reordered
   * into its preferred layout, say): which storage `tensor` views, and how often Backplane has
   * written into it. `tensor` must be a tensor input of the kernel call running on the calling
   * thread (a `const DLTensor*` argument, or an element of a `Tensor[]` argument), asked about
   * while that call runs; anything else is undefined behaviour. Returns 1 and sets `*storage` to
   * a number that names the storage alone for the process's life (two views of one storage get
   * the same number; a freed storage's number is never given to another) and `*version` to a
   * count that grows with every write into it through Backplane. Returns 0, setting neither,
   * where the contents may change behind Backplane's back: memory the application or a DLPack
   * producer owns, or whose address the core handed out (Tensor::data_ptr, a DLPack export).
   * Then nothing computed from the contents may be kept past the call. */
  int32_t (*storage_version)(void* context, const DLTensor* tensor, uint64_t* storage,
                             uint64_t* version);
} bp_core_services;

/* ---------------------------------------------------------------------------------------- */
/* Collectives (ABI 1.6)                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* A plugin's communicator: its device's share of a group of processes that run collectives
 * together (an ncclComm_t, for the CUDA backend). Opaque to the core. */
typedef struct bp_communicator_object* bp_communicator;

/* How a reduction combines the processes' elements. A mean is a sum that the caller divides. */
typedef enum bp_reduction {
  BP_REDUCTION_SUM = 0,
  BP_REDUCTION_MAX = 1,
  BP_REDUCTION_MIN = 2
} bp_reduction;

/* The most bytes a communicator identifier may have. */
#define BP_MAX_COMMUNICATOR_ID_BYTES 1024

/* Collectives on a plugin's own memory, which bp::distributed runs instead of copying tensors
 * through host memory (docs/distributed.md). One process of a group calls make_communicator_id
 * and the group hands the bytes to the others; every process then calls communicator_create
 * for the device it uses, and the collectives, in the same order everywhere, from one thread
 * at a time per communicator. Every tensor passed is dense and contiguous on the
 * communicator's device, of the same dtype and shape on every process. Each function returns
 * once the collective has completed on this process, its results written. All of them are set,
 * or the table is absent. */
typedef struct bp_collectives {
  size_t struct_size;
  /* Bit (1u << bp_dtype) set for each dtype all_reduce and reduce_scatter can reduce; for the
   * others the group copies through host memory. broadcast and all_gather take every dtype. */
  uint32_t reducible_dtypes;
  /* How many bytes make_communicator_id writes: 1 to BP_MAX_COMMUNICATOR_ID_BYTES. */
  uint32_t communicator_id_size;
  bp_status (*make_communicator_id)(void* id);
  /* Collective over the `size` processes, which pass the same `id` and their own `rank`. */
  bp_status (*communicator_create)(int32_t device, int32_t rank, int32_t size, const void* id,
                                   bp_communicator* communicator);
  void (*communicator_destroy)(bp_communicator communicator);
  /* In place: every process's `tensor` becomes the reduction of all of theirs. */
  bp_status (*all_reduce)(bp_communicator communicator, DLTensor* tensor, bp_reduction reduction);
  /* Every process's `tensor` becomes that of process `root`. */
  bp_status (*broadcast)(bp_communicator communicator, DLTensor* tensor, int32_t root);
  /* `output` has `size` times the elements of `input`: every process's input in rank order. */
  bp_status (*all_gather)(bp_communicator communicator, const DLTensor* input, DLTensor* output);
  /* `input` has `size` times the elements of `output`; process r gets the reduction of every
   * process's part r. */
  bp_status (*reduce_scatter)(bp_communicator communicator, const DLTensor* input, DLTensor* output,
                              bp_reduction reduction);
} bp_collectives;

/* ---------------------------------------------------------------------------------------- */
/* The plugin descriptor                                                                     */
/* ---------------------------------------------------------------------------------------- */

/*
 * Everything a plugin offers. The descriptor and everything it points to stay valid until the
 * plugin is unloaded. Functions marked optional may be NULL.
 *
 * Memory functions take a device index and "device pointers": opaque values the plugin's
 * allocate returned (a cl_mem for OpenCL), addressed together with a byte offset. A plugin
 * whose devices use ordinary host memory managed by the core (the CPU backend) leaves all
 * memory functions NULL.
 */
typedef struct bp_plugin {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;

  const char* name;    /* backend name: "cpu", "cuda"; lower case, as in BACKPLANE_BACKENDS */
  const char* version; /* the plugin's own version, "1.2.0" */

  /* Message for the most recent non-OK status returned on the calling thread. Never NULL. */
  const char* (*last_error)(void);

  /* Optional. Called once after the core accepted the descriptor, before any other call. A
   * non-OK status unloads the plugin, and its message is kept as the reason. */
  bp_status (*init)(void);
  /* Optional. Called once before the plugin is unloaded. */
  void (*shutdown)(void);

  /* Number of devices. A non-OK status means the plugin stays loaded with no devices; the
   * message says why (no driver, no platform) and bp-info shows it. */
  bp_status (*device_count)(int32_t* count);
  /* Fill in `props` for device `device`. */
  bp_status (*device_properties)(int32_t device, bp_device_properties* props);

  /* Optional (see above). `*ptr` receives a device pointer for `bytes` bytes. */
  bp_status (*allocate)(int32_t device, uint64_t bytes, void** ptr);
  bp_status (*deallocate)(int32_t device, void* ptr);
  bp_status (*copy_host_to_device)(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                                   uint64_t bytes);
  bp_status (*copy_device_to_host)(int32_t device, void* dst, const void* src, uint64_t src_offset,
                                   uint64_t bytes);
  bp_status (*copy_device_to_device)(int32_t device, void* dst, uint64_t dst_offset,
                                     const void* src, uint64_t src_offset, uint64_t bytes);
  /* Optional. Wait until all work queued on `device` has finished. */
  bp_status (*synchronize)(int32_t device);

  const bp_kernel* kernels;
  int64_t kernel_count;

  /* ABI 1.1. Optional. The plugin's counters as they are now, read live each time (bp-info and
   * bp::backend_counters show them). Writes the first min(capacity, N) of its N counters into
   * `counters` (see bp_counter for how entries are laid out) and sets `*count` to N, always in
   * the same order; `counters` may be NULL when `capacity` is 0, to ask for N alone. The core
   * calls it again with more room when N exceeds `capacity`. May be called from any thread at
   * any time, also while kernels run. */
  bp_status (*read_counters)(bp_counter* counters, int64_t capacity, int64_t* count);

  /* ABI 1.2. Optional, all six or none. A plugin whose functions return before the device has
   * finished the work they queued provides them, so that applications can wait for and time
   * part of that work without waiting for all of it. Without them the core makes do with
   * synchronize: recording an event waits for the device and reads the host's clock.
   * Each may be called from any thread; calls on one event come from one thread at a time. */

  /* `*event` receives a new event of `device`, not yet recorded. */
  bp_status (*event_create)(int32_t device, bp_event* event);
  /* Frees an event. Work it was recorded behind may still be running; the event must not
   * outlive nor delay it. */
  bp_status (*event_destroy)(int32_t device, bp_event event);
  /* Marks the point after everything queued on `device` so far. Recording again moves the mark
   * to the present. Returns without waiting. */
  bp_status (*event_record)(int32_t device, bp_event event);
  /* `*complete` = 1 when the work before the mark has finished (also for an event never
   * recorded), else 0. Does not wait. A failure of that work may be reported here. */
  bp_status (*event_query)(int32_t device, bp_event event, uint8_t* complete);
  /* Waits until the work before the mark has finished (returns at once for an event never
   * recorded), and reports that work's failure. */
  bp_status (*event_synchronize)(int32_t device, bp_event event);
  /* `*milliseconds` = the device's time from the mark of `start` to that of `end`, both
   * recorded on `device` and complete (the core waits for both first). Negative when `end`
   * was recorded first. */
  bp_status (*event_elapsed)(int32_t device, bp_event start, bp_event end, double* milliseconds);

  /* ABI 1.3. Optional. Called once, after the core accepted the descriptor and before init, with
   * the services the core offers this plugin; `services` and everything it points to stay
   * valid until the process exits. A core older than 1.3 never calls it, so a plugin must do
   * without (bp::plugin::warn then writes to stderr itself). */
  void (*attach_core)(const bp_core_services* services);

  /* ABI 1.4. What the plugin's device pointers are, as a DLDeviceType of dlpack.h: the
   * device_type of DLTensor::device in the views its kernels receive, and what the core tells
   * DLPack consumers. kDLCUDA for CUDA device memory, kDLOpenCL for cl_mem objects, kDLCPU for
   * addresses the host can use (also memory the plugin allocates itself with malloc),
   * kDLExtDev for memory DLPack has no type for. 0 (or a plugin older than 1.4) leaves it to the
   * core, which says kDLCPU for a plugin without memory functions and otherwise guesses from
   * the backend's name, kDLExtDev when the name tells it nothing. A negative value is refused. */
  int32_t dlpack_device_type;

  /* ABI 1.6. Optional. Collectives on the plugin's memory (see bp_collectives); NULL, or a
   * plugin older than 1.6, and tensors on its devices go through host memory instead. */
  const bp_collectives* collectives;
} bp_plugin;

/* The exported entry point. The core passes its own ABI version, so that a plugin may adapt
 * or refuse (by returning NULL). */
typedef const bp_plugin* (*bp_plugin_entry_fn)(uint32_t core_abi_major, uint32_t core_abi_minor);

/* ---------------------------------------------------------------------------------------- */
/* Schema hashes                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* 64-bit FNV-1a of the canonical schema string (the schema as bp-codegen prints it back). The
 * core and bp-codegen both use this definition; it is inline so that a plugin needs no
 * library to compute it. */
static inline uint64_t bp_schema_hash(const char* canonical_schema) {
  uint64_t hash = 14695981039346656037ull;
  for (const unsigned char* p = (const unsigned char*)canonical_schema; *p; ++p) {
    hash ^= *p;
    hash *= 1099511628211ull;
  }
  return hash;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_ABI_H_ */
