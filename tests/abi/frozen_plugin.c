/*
 * A backend as a vendor would have written it against one released minor version of the ABI:
 * plain C, compiled once per frozen header of tests/abi/frozen (the build puts that header
 * first on the include path), using nothing but that header. The SDK's C++ helpers and the
 * core's generated tables are not part of the ABI, so an old plugin could not have had today's.
 *
 * Backend "abi1<minor>", one device whose memory the plugin allocates with malloc, and the
 * kernel add.out for contiguous float32 tensors. It offers every optional part its minor
 * version has: counters (1.1), events (1.2), attach_core (1.3), its DLPack device type (1.4),
 * and asks the core for its inputs' storage versions (1.5), counting the inputs it vouched for.
 */
#include <backplane/abi.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define BACKEND_NAME "abi1" STRINGIFY(BP_ABI_MINOR)

/* Kernels run on the calling thread, one call at a time per test: no locking needed. */
static const char* last_message = "no error";

static bp_status fail(bp_status status, const char* message) {
  last_message = message;
  return status;
}

static const char* last_error(void) { return last_message; }

static uint64_t add_calls = 0;

static bp_status device_count(int32_t* count) {
  *count = 1;
  return BP_STATUS_OK;
}

static bp_status device_properties(int32_t device, bp_device_properties* props) {
  (void)device;
  props->name = BACKEND_NAME " device";
  props->description = "malloc'd memory, built against a frozen ABI header";
  props->total_memory = 0;
  return BP_STATUS_OK;
}

static bp_status allocate(int32_t device, uint64_t bytes, void** ptr) {
  (void)device;
  /* malloc(0) may return NULL, which the core would take for a failure. */
  *ptr = malloc(bytes == 0 ? 1 : (size_t)bytes);
  return *ptr == NULL ? fail(BP_STATUS_OUT_OF_MEMORY, BACKEND_NAME ": out of host memory")
                      : BP_STATUS_OK;
}

static bp_status deallocate(int32_t device, void* ptr) {
  (void)device;
  free(ptr);
  return BP_STATUS_OK;
}

static bp_status copy_host_to_device(int32_t device, void* dst, uint64_t dst_offset,
                                     const void* src, uint64_t bytes) {
  (void)device;
  memcpy((char*)dst + dst_offset, src, (size_t)bytes);
  return BP_STATUS_OK;
}

static bp_status copy_device_to_host(int32_t device, void* dst, const void* src,
                                     uint64_t src_offset, uint64_t bytes) {
  (void)device;
  memcpy(dst, (const char*)src + src_offset, (size_t)bytes);
  return BP_STATUS_OK;
}

static bp_status copy_device_to_device(int32_t device, void* dst, uint64_t dst_offset,
                                       const void* src, uint64_t src_offset, uint64_t bytes) {
  (void)device;
  memmove((char*)dst + dst_offset, (const char*)src + src_offset, (size_t)bytes);
  return BP_STATUS_OK;
}

static int is_contiguous_float32(const DLTensor* t) {
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) return 0;
  int64_t expected = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] != 1 && t->strides[d] != expected) return 0;
    expected *= t->shape[d];
  }
  return 1;
}

static double scalar_value(bp_scalar s) {
  switch (s.kind) {
    case BP_SCALAR_BOOL: return s.value.b ? 1.0 : 0.0;
    case BP_SCALAR_INT: return (double)s.value.i;
    default: return s.value.f;
  }
}

/* add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!) */
#if BP_ABI_MINOR >= 5
static const bp_core_services* core_services = NULL;
static uint64_t versioned_inputs = 0; /* add.out inputs whose storage version the core gave */

/* Whether the core vouches for the contents of `tensor`, an input of the running kernel. */
static int has_storage_version(const DLTensor* tensor) {
  if (core_services == NULL ||
      core_services->struct_size <
          offsetof(bp_core_services, storage_version) + sizeof(core_services->storage_version)) {
    return 0;
  }
  uint64_t storage = 0;
  uint64_t version = 0;
  return core_services->storage_version(core_services->context, tensor, &storage, &version);
}
#endif

static bp_status add_out(const DLTensor* self, const DLTensor* other, bp_scalar alpha,
                         DLTensor* out) {
  if (!is_contiguous_float32(self) || !is_contiguous_float32(other) ||
      !is_contiguous_float32(out)) {
    return fail(BP_STATUS_UNIMPLEMENTED,
                BACKEND_NAME ": add.out takes contiguous float32 tensors only");
  }
  int64_t n = 1;
  for (int32_t d = 0; d < out->ndim; ++d) n *= out->shape[d];
  const float* a = (const float*)((const char*)self->data + self->byte_offset);
  const float* b = (const float*)((const char*)other->data + other->byte_offset);
  float* y = (float*)((char*)out->data + out->byte_offset);
  const float scale = (float)scalar_value(alpha);
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + scale * b[i];
  ++add_calls;
#if BP_ABI_MINOR >= 5
  versioned_inputs += (uint64_t)has_storage_version(self) + (uint64_t)has_storage_version(other);
#endif
  return BP_STATUS_OK;
}

#if BP_ABI_MINOR >= 1
static uint64_t core_attached = 0;

static bp_status read_counters(bp_counter* counters, int64_t capacity, int64_t* count) {
#if BP_ABI_MINOR >= 5
  const char* names[] = {BACKEND_NAME ".add_calls", BACKEND_NAME ".core_attached",
                         BACKEND_NAME ".versioned_inputs"};
  const uint64_t values[] = {add_calls, core_attached, versioned_inputs};
  const int64_t n = 3;
#else
  const char* names[] = {BACKEND_NAME ".add_calls", BACKEND_NAME ".core_attached"};
  const uint64_t values[] = {add_calls, core_attached};
  const int64_t n = 2;
#endif
  for (int64_t i = 0; i < n && i < capacity; ++i) {
    /* Entries lie struct_size apart, and only the fields within it may be written. */
    const size_t size = counters[0].struct_size;
    bp_counter* entry = (bp_counter*)((char*)counters + i * size);
    if (size >= offsetof(bp_counter, name) + sizeof(entry->name)) entry->name = names[i];
    if (size >= offsetof(bp_counter, value) + sizeof(entry->value)) entry->value = values[i];
  }
  *count = n;
  return BP_STATUS_OK;
}
#endif

#if BP_ABI_MINOR >= 2
/* The device finishes its work before each call returns: an event is complete once made. */
struct bp_event_object {
  int32_t device;
};

static bp_status event_create(int32_t device, bp_event* event) {
  *event = (bp_event)malloc(sizeof(struct bp_event_object));
  if (*event == NULL) return fail(BP_STATUS_OUT_OF_MEMORY, BACKEND_NAME ": out of host memory");
  (*event)->device = device;
  return BP_STATUS_OK;
}

static bp_status event_destroy(int32_t device, bp_event event) {
  (void)device;
  free(event);
  return BP_STATUS_OK;
}

static bp_status event_record(int32_t device, bp_event event) {
  (void)device;
  (void)event;
  return BP_STATUS_OK;
}

static bp_status event_query(int32_t device, bp_event event, uint8_t* complete) {
  (void)device;
  (void)event;
  *complete = 1;
  return BP_STATUS_OK;
}

static bp_status event_synchronize(int32_t device, bp_event event) {
  (void)device;
  (void)event;
  return BP_STATUS_OK;
}

static bp_status event_elapsed(int32_t device, bp_event start, bp_event end, double* milliseconds) {
  (void)device;
  (void)start;
  (void)end;
  *milliseconds = 0.0;
  return BP_STATUS_OK;
}
#endif

#if BP_ABI_MINOR >= 3
static void attach_core(const bp_core_services* services) {
#if BP_ABI_MINOR >= 5
  core_services = services;
#else
  (void)services;
#endif
  core_attached = 1;
}
#endif

static bp_kernel kernels[1];
static bp_plugin plugin;

BP_PLUGIN_EXPORT const bp_plugin* backplane_plugin_entry(uint32_t core_abi_major,
                                                         uint32_t core_abi_minor) {
  (void)core_abi_major;
  (void)core_abi_minor;
  kernels[0].struct_size = sizeof(bp_kernel);
  kernels[0].name = "add.out";
  /* The hash of the canonical schema, computed as every release of the header defines it. */
  kernels[0].schema_hash = bp_schema_hash(
      "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  /* Through void (*)(void), the generic function pointer type that GCC lets any cast to. */
  kernels[0].fn = (bp_kernel_fn)(void (*)(void))add_out;

  plugin.struct_size = sizeof(bp_plugin);
  plugin.abi_major = BP_ABI_MAJOR;
  plugin.abi_minor = BP_ABI_MINOR;
  plugin.name = BACKEND_NAME;
  plugin.version = "1." STRINGIFY(BP_ABI_MINOR) ".0";
  plugin.last_error = last_error;
  plugin.device_count = device_count;
  plugin.device_properties = device_properties;
  plugin.allocate = allocate;
  plugin.deallocate = deallocate;
  plugin.copy_host_to_device = copy_host_to_device;
  plugin.copy_device_to_host = copy_device_to_host;
  plugin.copy_device_to_device = copy_device_to_device;
  plugin.kernels = kernels;
  plugin.kernel_count = 1;
#if BP_ABI_MINOR >= 1
  plugin.read_counters = read_counters;
#endif
#if BP_ABI_MINOR >= 2
  plugin.event_create = event_create;
  plugin.event_destroy = event_destroy;
  plugin.event_record = event_record;
  plugin.event_query = event_query;
  plugin.event_synchronize = event_synchronize;
  plugin.event_elapsed = event_elapsed;
#endif
#if BP_ABI_MINOR >= 3
  plugin.attach_core = attach_core;
#endif
#if BP_ABI_MINOR >= 4
  plugin.dlpack_device_type = kDLCPU;
#endif
  return &plugin;
}
