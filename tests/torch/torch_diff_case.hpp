// One case of the PyTorch differential test as the runner sees it: its input tensors, built
// on the device from the driver's raw buffers and view recipe, and its named attributes.
// The manifest format is written by torch_diff_cases.py; README.md describes it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nbx/nbx.hpp"

namespace nbx::torch_diff {

// An input slot: a tensor, a host scalar, or absent (an optional operand left out).
using Operand = std::optional<ops::TensorOrScalar>;

class CaseArgs {
 public:
  CaseArgs(std::vector<Operand> operands, nlohmann::json attrs)
      : operands_(std::move(operands)), attrs_(std::move(attrs)) {}

  // The tensor in slot i. Throws std::invalid_argument (a malformed manifest, not an nbx
  // refusal) when the slot holds no tensor.
  const Tensor& t(std::size_t i) const;
  // Slot i as the op takes it: tensor or scalar.
  const ops::TensorOrScalar& ts(std::size_t i) const;
  std::optional<Tensor> opt_t(std::size_t i) const;
  std::optional<ops::TensorOrScalar> opt_ts(std::size_t i) const;

  bool has(const char* name) const { return attrs_.contains(name) && !attrs_[name].is_null(); }
  Scalar scalar(const char* name) const;
  double real(const char* name) const;
  std::optional<double> opt_real(const char* name) const;
  std::int64_t integer(const char* name) const;
  std::optional<std::int64_t> opt_integer(const char* name) const;
  bool flag(const char* name) const { return attrs_.at(name).get<bool>(); }
  std::vector<std::int64_t> ints(const char* name) const;
  std::vector<double> reals(const char* name) const;
  Shape shape(const char* name) const;
  DType dtype(const char* name) const;
  std::optional<DType> opt_dtype(const char* name) const;
  std::string text(const char* name) const { return attrs_.at(name).get<std::string>(); }

 private:
  std::vector<Operand> operands_;
  nlohmann::json attrs_;
};

// A scalar written by the driver: {"kind": "bool"|"int"|"float", "value": "<text>"} (text, so
// NaN, ±inf and int64 extremes survive JSON).
Scalar parse_scalar(const nlohmann::json& j);

// Builds slot `spec` on `device`: a tensor from `blob` (its base buffer, then its views in
// order), a scalar, or absent.
Operand build_operand(const nlohmann::json& spec, const std::vector<char>& blob,
                      const Device& device);

}  // namespace nbx::torch_diff
