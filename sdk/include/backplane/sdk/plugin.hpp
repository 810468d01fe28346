// Everything a plugin author includes: the C ABI plus its header-only C++ layer.
#pragma once

#include <backplane/abi.h>
#include <backplane/sdk/configure.hpp>
#include <backplane/sdk/convert_elements.hpp>
#include <backplane/sdk/counters.hpp>
#include <backplane/sdk/device_properties.hpp>
#include <backplane/sdk/dispatch.hpp>
#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/dtype_promises.hpp>
#include <backplane/sdk/dtype_set.hpp>
#include <backplane/sdk/half.hpp>
#include <backplane/sdk/kernel_dtypes.h>
#include <backplane/sdk/log.hpp>
#include <backplane/sdk/scalar.hpp>
#include <backplane/sdk/status.hpp>
#include <backplane/sdk/strided_loop.hpp>
#include <backplane/sdk/tensor_view.hpp>
#include <backplane/sdk/window2d.hpp>
