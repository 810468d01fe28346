// The public API: #include <backplane/backplane.h>.
#pragma once

#include <backplane/autograd.h>
#include <backplane/device.h>
#include <backplane/dlpack.h>
#include <backplane/error.h>
#include <backplane/event.h>
#include <backplane/factories.h>
#include <backplane/generated/Functions.h>
#include <backplane/memory.h>
#include <backplane/optim.h>
#include <backplane/runtime.h>
#include <backplane/tensor.h>
#include <backplane/generated/TensorMethodsInline.h>
#include <backplane/tensor_operators.h>
