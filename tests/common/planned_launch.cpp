#include "tests/common/planned_launch.hpp"

#include <vector>

#include "core/kernel_abi.hpp"

namespace nbx::testing {

int launch_planned(BackendDevice& device, const KernelLaunch& launch) {
  const FamilySpec& spec = family_spec(launch.family);
  std::vector<std::byte> params(launch.params.begin(), launch.params.end());
  int rows = -1;
  if (launch.family == KernelFamily::kReduce) rows = abi::kReduceRows;
  if (launch.family == KernelFamily::kSoftmax) rows = abi::kSoftmaxRows;
  if (launch.family == KernelFamily::kNorm) rows = abi::kNormRows;
  const int own = spec.variant_of(params.data());
  const int subgroup = device.properties().subgroup_size.value_or(32);
  int chosen = own;
  if (rows >= 0 && device.offers(launch.family, rows) &&
      spec.variant_refusal(rows, params.data(), subgroup).empty())
    chosen = rows;
  spec.set_variant(params.data(), chosen);
  device.launch({launch.family, launch.buffers, params});
  return chosen;
}

}  // namespace nbx::testing
