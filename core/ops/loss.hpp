// Loss functions, PyTorch's (torch.nn.functional) semantics, composed of the library's device
// ops — reductions, gather/index_select, where and elementwise ops — so every backend runs
// them with no kernel of their own (explain family "loss").
//
// `reduction` is "none" (the loss of every element, in the shape named below), "mean" or
// "sum" (0-d), and for kl_div also "batchmean"; anything else throws InvalidArgument. A mean
// over no elements is NaN (0/0), as PyTorch's; a sum over none is 0. A float16/bfloat16
// result is computed in float32 and rounded once. Where the result is wider than an operand,
// the parts PyTorch computes from that operand alone keep its dtype, as PyTorch's (the
// input's log_softmax and log_sigmoid, the target's smoothing, xlogy(t, t) and exp(t)); the
// rest is computed in the result's dtype.
//
// cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing): input
//   holds logits, [C], [N, C] or [N, C, d1, …] (classes along dim 1, dim 0 for [C]).
//   - Class-index targets (int64; int32 too; uint8 for [C] and [N, C] inputs, as PyTorch): [], [N]
//   or
//     [N, d1, …]. The loss of an element is w[t]·(logsumexp(x) − x[t]); with label smoothing
//     ε it is (1 − ε)·that + (ε/C)·Σ_c w[c]·(logsumexp(x) − x[c]). Elements whose target is
//     ignore_index lose 0 and weigh 0; mean divides by Σ w[t] over the others (their count
//     without a weight), so all ignored gives NaN. weight: [C], the input's dtype. Over
//     vocabulary-sized rows nothing of the input's size is made: one logsumexp pass per row,
//     one gathered logit per row, and with label smoothing one more row sum (of w·x with a
//     weight: then one product of the input's size, float32 for half inputs) — log_softmax
//     is never materialised. A target outside [0, C) that is not ignore_index is a device
//     fault: nbx::DeviceFault from op "gather" (at once on the host, at the next synchronize
//     or read back elsewhere) naming the target, C and its position in the target; ignored
//     positions read class 0 instead and never fault. With C = 0 every kept target is out of
//     range: the targets are then read back to find one (a synchronize; PyTorch's shape).
//     Accuracy: log p[t] = x[t] − logsumexp(x) carries the dtype's eps times |logsumexp(x)|,
//     where PyTorch's log_softmax (x − max first) carries eps·|x[t] − max|: the two part for
//     logits far from 0 (equal float32 logits near 1e4 agree to ~1e-3, near 1e30 not at all).
//     The smoothing term is computed as lse·Σw − Σ_c w[c]·x[c]; where C·|x| passes the
//     dtype's largest value (|x| ≳ 3.4e38 / C in float32) both products overflow and the term
//     is NaN where PyTorch's Σ w·log_softmax is finite or infinite.
//   - Class-probability targets (a floating target of the input's shape): the loss of an
//     element is −Σ_c w[c]·y[c]·log_softmax(x)[c], y smoothed to (1 − ε)·y + ε/C; mean
//     divides by the number of elements (N·d1·…), as PyTorch (not by the weights).
//     ignore_index must be negative. The result dtype promotes input, target and weight.
//   Result: the input's dtype (class indices); reduction none has the target's shape.
//   label_smoothing must lie in [0, 1].
// nll_loss(input, target, weight, ignore_index, reduction): input holds log-probabilities;
//   class-index targets only, as above: the loss of an element is −w[t]·x[t].
// mse_loss, l1_loss: (x − y)² and |x − y| of x and y broadcast together (PyTorch broadcasts
//   too); the result dtype promotes both. mse_loss takes floating results only; l1_loss also
//   integers for none and sum (sum gives int64), not for mean, as PyTorch.
// smooth_l1_loss(…, beta): 0.5·d²/beta where |d| < beta, |d| − 0.5·beta elsewhere; beta 0 is
//   l1_loss; a negative or NaN beta throws InvalidArgument.
// binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight): the stable
//   (1 − y)·x + (1 + (p − 1)·y)·(max(−x, 0) + log1p(exp(−|x|))), times weight. target has
//   input's shape; weight and pos_weight (p) broadcast to it (pos_weight [C] along the last
//   dim). The result has the target's dtype (PyTorch writes its formula into 1 − y), so the
//   target must be floating.
// kl_div(input, target, reduction, log_target): target·(log target − input) (0 where the
//   target is 0: xlogy), or exp(t)·(t − input) for log targets; batchmean divides the sum by
//   input.size(0). No integer or bool operand.
//
// Throws InvalidArgument for undefined tensors, tensors on different devices, dtypes an op
// does not define (naming op and dtype), shapes that do not fit (with the shapes), a weight
// of the wrong size or dtype, and bad attributes; Unsupported (naming op, device and
// capability) for a dtype the device lacks.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/tensor.hpp"

namespace nbx::ops {

Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const std::optional<Tensor>& weight = {}, std::int64_t ignore_index = -100,
                     std::string_view reduction = "mean", double label_smoothing = 0.0);
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = {},
                std::int64_t ignore_index = -100, std::string_view reduction = "mean");
Tensor mse_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean");
Tensor l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean");
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      std::string_view reduction = "mean", double beta = 1.0);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = {},
                                        std::string_view reduction = "mean",
                                        const std::optional<Tensor>& pos_weight = {});
Tensor kl_div(const Tensor& input, const Tensor& target, std::string_view reduction = "mean",
              bool log_target = false);

}  // namespace nbx::ops
