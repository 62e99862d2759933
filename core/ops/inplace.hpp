// In-place and out= forms of the elementwise ops, PyTorch semantics. A real engine
// preallocates: KV caches are written into, activations reuse buffers. (Tensor::copy_,
// fill_ and zero_ are in tensor.hpp; the out= forms of reductions, matrix products, softmax
// and norms next to their ops.)
//
//   ops::add_(self, other, alpha)      writes self + alpha * other into self, returns self;
//   ops::add_out(out, self, other, …)  writes add(self, other, …) into out, returns out.
//
// One line per op in core/ops/elementwise_inplace.inc declares both (the _out form alone for
// ops PyTorch has no in-place form of: maximum, where, softplus, isnan …). The returned
// Tensor is a handle to self's (out's) storage. Rules, as PyTorch's:
//  - self never grows: the other operands broadcast to self's shape ("output with shape
//    [3] doesn't match the broadcast shape [2, 3]"). An out= tensor must have the result's
//    shape: nbx never resizes it (PyTorch resizes an out of the wrong shape, silently only
//    when it is empty; an nbx Tensor is a handle, and a resize could not reach its other
//    handles), so a wrong shape is refused by name, an empty out included.
//  - the op's result dtype must cast to self's (out's): can_cast refuses a floating result
//    into an integer or bool tensor and a number into a bool one, so int32.add_(2.5) and
//    int32.div_(int32) are refused ("result type float32 can't be cast to the desired output
//    type int32"); int32.add_(int64) wraps and float16.add_(float32) rounds once. nbx applies
//    this rule to every op's out=; PyTorch's same-dtype unary ops (neg, abs, gelu …) refuse
//    any out dtype but their own.
//  - self (out) must live on the op's device and must not be an expanded view ("more than one
//    element of the written-to tensor refers to a single memory location").
//  - an input may be self element for element (x.add_(x)); one that partially overlaps it,
//    both dense (x[1:].add_(x[:-1]), x.add_(x[0])), is refused ("some elements of the input
//    tensor and the written-to tensor refer to a single memory location"); strided views
//    whose memory ranges interleave are computed into a temporary first, so the result is
//    the out-of-place op's (PyTorch leaves that case undefined).
// The op's own launch writes through self's strides; a dtype other than the result's, an
// interleaving input, or an op made of several launches (gelu_ among them) computes out of
// place and copies. Every other error is the op's own (elementwise.hpp).
#pragma once

#include <optional>

#include "core/ops/elementwise.hpp"

namespace nbx::ops {

#define NBX_DEFAULT(value) = value
#define NBX_FORM_PARAMS(...) __VA_OPT__(, __VA_ARGS__)
#define NBX_OUT_ONLY(op, params, args) \
  Tensor op##_out(const Tensor& out, const Tensor& self NBX_FORM_PARAMS params);
#define NBX_INPLACE(op, params, args)                      \
  Tensor op##_(const Tensor& self NBX_FORM_PARAMS params); \
  NBX_OUT_ONLY(op, params, args)
#include "core/ops/elementwise_inplace.inc"
#undef NBX_INPLACE
#undef NBX_OUT_ONLY
#undef NBX_FORM_PARAMS
#undef NBX_DEFAULT

}  // namespace nbx::ops
