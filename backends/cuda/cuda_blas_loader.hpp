// The cuBLASLt library, opened at run time (cuda_blas.cpp explains why it is not linked):
// the search order, the entry points cuda_blas.cpp calls, and the version check.
#pragma once

#include <cublasLt.h>

#include <string>

namespace nbx::gpu {

// The cuBLASLt entry points cuda_blas.cpp and cuda_blas_tune.cpp call; ok is false (and
// status says why) when no library of this build's major version was found.
struct LtApi {
  bool ok = false;
  std::string status;
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetVersion) version = nullptr;
  decltype(&cublasLtGetStatusName) status_name = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmulAlgoConfigGetAttribute) algo_config_get = nullptr;  // for logs
  decltype(&cublasLtMatmul) matmul = nullptr;
};

// Loaded once per process on first use, never unloaded.
const LtApi& lt_api();

}  // namespace nbx::gpu
