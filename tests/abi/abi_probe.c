/*
 * What abidiff compares (scripts/check-abi.sh): a shared object built with -g from one abi.h,
 * whose debug information describes every type of the ABI. Each type is reached through a
 * function of its own, so that a type a later minor version adds is an added function, which
 * the check leaves out of abidiff's report. A type added by ABI 1.N gets its probe
 * inside `#if BP_ABI_MINOR >= N`, since the probe is also built from the older header.
 */
#include <backplane/abi.h>

#define PROBE(type, name) \
  BP_PLUGIN_EXPORT void bp_abi_probe_##name(type value) { (void)value; }

PROBE(bp_status, status)
PROBE(bp_dtype, dtype)
PROBE(bp_scalar_kind, scalar_kind)
PROBE(bp_scalar, scalar)
PROBE(bp_int_list, int_list)
PROBE(bp_optional_int, optional_int)
PROBE(bp_optional_float, optional_float)
PROBE(bp_tensor_list, tensor_list)
PROBE(bp_kernel_fn, kernel_fn)
PROBE(const bp_kernel*, kernel)
PROBE(const bp_device_properties*, device_properties)
PROBE(const bp_counter*, counter)
PROBE(bp_event, event)
PROBE(bp_log_level, log_level)
PROBE(const bp_core_services*, core_services)
PROBE(const bp_plugin*, plugin)
PROBE(bp_plugin_entry_fn, plugin_entry_fn)

#if BP_ABI_MINOR >= 6
PROBE(const bp_collectives*, collectives)
PROBE(bp_communicator, communicator)
PROBE(bp_reduction, reduction)
#endif
