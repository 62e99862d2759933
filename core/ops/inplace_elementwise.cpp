// The in-place and out= forms of the elementwise ops (inplace.hpp), generated from
// elementwise_inplace.inc, and the per-thread destination they hand to the op's launch.
#include "core/ops/inplace.hpp"

#include <utility>

#include "core/ops/inplace_destination.hpp"
#include "core/ops/inplace_write.hpp"

namespace nbx::ops {
namespace detail {
namespace {

// One destination per thread at a time (nested forms restore the outer one): ops on
// distinct threads never see each other's.
thread_local ScopedDestination* current_destination = nullptr;

}  // namespace

ScopedDestination::ScopedDestination(const Tensor& out, std::string_view op, std::string form,
                                     bool in_place)
    : form_(std::move(form)), op_(op), previous_(current_destination) {
  out_.tensor = out;
  out_.form = form_;
  out_.in_place = in_place;
  current_destination = this;
}

ScopedDestination::~ScopedDestination() {
  current_destination = previous_;
}

Tensor ScopedDestination::finish(const Tensor& result) const {
  const Tensor& out = out_.tensor;
  if (claimed_ && result.storage() == out.storage() && result.offset() == out.offset()) return out;
  check_destination(form_, out, result.shape(), result.dtype(), result.device(),
                    /*exact_dtype=*/false, out_.in_place);
  copy_into(form_, out, result);
  return out;
}

const OutputView* claim_destination(std::string_view op) {
  ScopedDestination* d = current_destination;
  if (!d) return nullptr;
  const bool first = !d->run_seen_;
  d->run_seen_ = true;
  if (!first || op != d->op_) return nullptr;
  d->claimed_ = true;
  return &d->out_;
}

}  // namespace detail

#define NBX_DEFAULT(value)
#define NBX_FORM_PARAMS(...) __VA_OPT__(, __VA_ARGS__)
#define NBX_FORM_ARGS(...) __VA_OPT__(, __VA_ARGS__)
#define NBX_OUT_ONLY(op, params, args)                                            \
  Tensor op##_out(const Tensor& out, const Tensor& self NBX_FORM_PARAMS params) { \
    detail::ScopedDestination destination(out, #op, #op "_out", false);           \
    return destination.finish(op(self NBX_FORM_ARGS args));                       \
  }
#define NBX_INPLACE(op, params, args)                                \
  Tensor op##_(const Tensor& self NBX_FORM_PARAMS params) {          \
    detail::ScopedDestination destination(self, #op, #op "_", true); \
    return destination.finish(op(self NBX_FORM_ARGS args));          \
  }                                                                  \
  NBX_OUT_ONLY(op, params, args)
#include "core/ops/elementwise_inplace.inc"
#undef NBX_INPLACE
#undef NBX_OUT_ONLY
#undef NBX_FORM_ARGS
#undef NBX_FORM_PARAMS
#undef NBX_DEFAULT

}  // namespace nbx::ops
