// Rotary position embedding, vLLM's rotary_embedding semantics (the "rotary" kernel family,
// core/families/rotary_family.cpp).
//
// rotary_embedding_(q, k, positions, cos_sin_cache, rotary_dim, style): rotates q and k IN
//   PLACE. q is [..., Hq, D] and k (optional) [..., Hk, D] with the same leading "token" dims
//   (any strides: a [B, S, H, D] view is fine; head counts and head sizes may differ);
//   positions (int32 or int64) has the token dims' shape; cos_sin_cache is
//   [max_position, rotary_dim] (float32 or q's dtype): its first rotary_dim / 2 columns are
//   cos, the rest sin. Only the first rotary_dim elements of each head are rotated (partial
//   rotary); the rest are untouched. Pairs are (i, i + rotary_dim / 2) with kRotateHalf
//   (NeoX, Llama) or (2i, 2i + 1) with kInterleaved (GPT-J); with c = cos[pos][i],
//   s = sin[pos][i]: x1' = x1·c − x2·s, x2' = x2·c + x1·s, computed in float32 (float64 for
//   float64; the host reference in float64) and rounded once.
//   A position outside [0, max_position) touches no memory out of range: it is recorded on
//   the device and raised as nbx::DeviceFault at the next synchronize or read back (the host
//   at once), naming the op, the position, the bound and the token (its row-major index over
//   the token dims); the results of that launch are not defined, the device stays usable.
//   Throws InvalidArgument (naming the op and the shapes) for undefined tensors, tensors on
//   different devices, q or k with fewer than 2 dims, token dims or positions that do not
//   match, a rotary_dim that is odd, not positive or larger than a head, a cache that is not
//   2-d or not rotary_dim wide, q and k of different dtypes, a non-float q, positions that are
//   not int32/int64, a cache that is neither float32 nor q's dtype, a q or k with one element
//   at several indices (an expanded view), q and k sharing elements. Unsupported (capability
//   "fp64", "bf16", …) where the device lacks a dtype.
//   q and k may be disjoint head slices of one tensor (a fused qkv projection).
// rotary_embedding(…): the same on fresh copies (q.clone(), k.clone(): contiguous), the
//   inputs untouched; returns them.
// rotary_cos_sin_cache(max_position, rotary_dim, base, dtype, device): the cache vLLM builds,
//   made on the device from arange, pow, mul, cos, sin and cat: inv_freq[i] =
//   base^(-2i / rotary_dim), angle[t][i] = t · inv_freq[i], [cos(angle) | sin(angle)],
//   [max_position, rotary_dim] of `dtype`. The arithmetic runs in float64 where the device
//   has fp64 and in float32 otherwise (as vLLM), then is cast to `dtype` once.
//   Throws InvalidArgument for a negative max_position, an odd or non-positive rotary_dim,
//   a base that is not positive and finite, a non-float dtype.
#pragma once

#include <cstdint>
#include <optional>

#include "core/tensor.hpp"

namespace nbx::ops {

enum class RotaryStyle { kRotateHalf, kInterleaved };

struct RotaryResult {
  Tensor q;
  std::optional<Tensor> k;  // present when k was given
};

void rotary_embedding_(const Tensor& q, const std::optional<Tensor>& k, const Tensor& positions,
                       const Tensor& cos_sin_cache, std::int64_t rotary_dim,
                       RotaryStyle style = RotaryStyle::kRotateHalf);
RotaryResult rotary_embedding(const Tensor& q, const std::optional<Tensor>& k,
                              const Tensor& positions, const Tensor& cos_sin_cache,
                              std::int64_t rotary_dim,
                              RotaryStyle style = RotaryStyle::kRotateHalf);
Tensor rotary_cos_sin_cache(std::int64_t max_position, std::int64_t rotary_dim, double base = 10000,
                            DType dtype = DType::kFloat32, const Device& device = host_device());

}  // namespace nbx::ops
