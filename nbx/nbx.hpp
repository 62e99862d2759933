// The public API in one include: tensors, devices, capabilities, errors and the ops.
#pragma once

#include "core/capabilities.hpp"
#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/index.hpp"
#include "core/ops/index_write.hpp"
#include "core/ops/inplace.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/norm.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/scan.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/softmax.hpp"
#include "core/ops/sort.hpp"
#include "core/tensor.hpp"
