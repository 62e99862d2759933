// Manifest slots to device tensors. The view recipe is applied with the public view API, so
// every case also exercises transposed, sliced, permuted and broadcast (stride-0) reads.
#include "tests/torch/torch_diff_case.hpp"

#include <cstdlib>
#include <stdexcept>

namespace nbx::torch_diff {

namespace {

Shape to_shape(const nlohmann::json& j) {
  Shape s;
  for (const auto& v : j) s.push_back(v.get<std::int64_t>());
  return s;
}

Tensor apply_view(const Tensor& t, const nlohmann::json& v) {
  const std::string kind = v.at(0).get<std::string>();
  if (kind == "transpose") return t.transpose(v.at(1), v.at(2));
  if (kind == "permute") {
    const auto dims = v.at(1).get<std::vector<std::int64_t>>();
    return t.permute(std::span<const std::int64_t>(dims));
  }
  if (kind == "slice") return t.slice(v.at(1), v.at(2), v.at(3), v.at(4));
  if (kind == "narrow") return t.narrow(v.at(1), v.at(2), v.at(3));
  if (kind == "expand") return t.expand(to_shape(v.at(1)));
  if (kind == "unsqueeze") return t.unsqueeze(v.at(1));
  if (kind == "squeeze") return t.squeeze(v.at(1));
  if (kind == "view") return t.view(to_shape(v.at(1)));
  throw std::invalid_argument("unknown view kind " + kind);
}

}  // namespace

Scalar parse_scalar(const nlohmann::json& j) {
  const std::string kind = j.at("kind").get<std::string>();
  const std::string text = j.at("value").get<std::string>();
  if (kind == "bool") return Scalar(text == "True" || text == "true" || text == "1");
  if (kind == "int") return Scalar(static_cast<std::int64_t>(std::stoll(text)));
  if (kind == "float") return Scalar(std::strtod(text.c_str(), nullptr));  // "nan", "-inf"
  throw std::invalid_argument("unknown scalar kind " + kind);
}

Operand build_operand(const nlohmann::json& spec, const std::vector<char>& blob,
                      const Device& device) {
  if (spec.is_null()) return std::nullopt;
  if (spec.contains("scalar")) return ops::TensorOrScalar(parse_scalar(spec.at("scalar")));
  const DType dtype = parse_dtype(spec.at("dtype").get<std::string>());
  const auto offset = spec.at("offset").get<std::size_t>();
  if (offset > blob.size()) throw std::invalid_argument("a tensor offset past the blob");
  Tensor t = Tensor::from_host(blob.data() + offset, to_shape(spec.at("shape")), dtype, device);
  for (const auto& v : spec.at("views")) t = apply_view(t, v);
  return ops::TensorOrScalar(t);
}

const Tensor& CaseArgs::t(std::size_t i) const {
  if (i >= operands_.size() || !operands_[i] || !operands_[i]->is_tensor())
    throw std::invalid_argument("slot " + std::to_string(i) + " holds no tensor");
  return operands_[i]->tensor();
}

const ops::TensorOrScalar& CaseArgs::ts(std::size_t i) const {
  if (i >= operands_.size() || !operands_[i])
    throw std::invalid_argument("slot " + std::to_string(i) + " is empty");
  return *operands_[i];
}

std::optional<Tensor> CaseArgs::opt_t(std::size_t i) const {
  if (i >= operands_.size() || !operands_[i]) return std::nullopt;
  return t(i);
}

std::optional<ops::TensorOrScalar> CaseArgs::opt_ts(std::size_t i) const {
  if (i >= operands_.size()) return std::nullopt;
  return operands_[i];
}

Scalar CaseArgs::scalar(const char* name) const {
  return parse_scalar(attrs_.at(name));
}

double CaseArgs::real(const char* name) const {
  return scalar(name).to_double();
}

std::optional<double> CaseArgs::opt_real(const char* name) const {
  if (!has(name)) return std::nullopt;
  return real(name);
}

std::int64_t CaseArgs::integer(const char* name) const {
  return attrs_.at(name).get<std::int64_t>();
}

std::optional<std::int64_t> CaseArgs::opt_integer(const char* name) const {
  if (!has(name)) return std::nullopt;
  return integer(name);
}

std::vector<std::int64_t> CaseArgs::ints(const char* name) const {
  return attrs_.at(name).get<std::vector<std::int64_t>>();
}

std::vector<double> CaseArgs::reals(const char* name) const {
  return attrs_.at(name).get<std::vector<double>>();
}

Shape CaseArgs::shape(const char* name) const {
  return to_shape(attrs_.at(name));
}

DType CaseArgs::dtype(const char* name) const {
  return parse_dtype(attrs_.at(name).get<std::string>());
}

std::optional<DType> CaseArgs::opt_dtype(const char* name) const {
  if (!has(name)) return std::nullopt;
  return dtype(name);
}

}  // namespace nbx::torch_diff
