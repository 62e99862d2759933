#!/usr/bin/env bash
# The one-GPU checks of issue 16 in one call: NCCL (PyTorch's nvidia/nccl wheel on the path,
# h200_steps.sh) behind nbx::Communicator with one rank on cuda:0 — every collective and
# dtype, both ways of making a communicator, ordering with the device's stream, the refusals
# (tests/unit/test_collectives) — and the tensor-parallel example on cuda:0 (one rank: the
# multi-GPU run needs a kind with several GPUs). Logs under OUT, packed into one file.
#
#   bench/run_h200_issue16.sh BUILD_DIR OUT_DIR      (BUILD_DIR from bench/pack_build.sh)
set -u
B=$1 O=$2
source "$(dirname "$0")/h200_steps.sh"
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on a lent machine (the library sets it too)
step collectives "${CAP:-120}" "$B/tests/unit/test_collectives"
step tensor_parallel_cuda "${CAP:-60}" "$B/tests/nbx-tensor-parallel" cuda:0
cat "$O/steps.log"
grep -h "test cases:\|tensor-parallel\|nbx-tensor-parallel" "$O"/*.log | head -10
tar czf /tmp/issue16-results.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/issue16-results.tgz "$O/"
