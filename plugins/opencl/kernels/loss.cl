// The negative log-likelihood loss and its gradient, over `samples` rows of log-probabilities
// (self[i, c]: row stride self_stride.s0, class stride self_stride.s1) with one Int64 target per
// row. The host has checked that every target is ignore_index or a class. Sample i whose target
// t is not ignore_index weighs weight[t] (1 without a weight). Floating dtypes only.

// Without reduction (0), output[i] is sample i's loss -weight[t] self[i, t] (0 where ignored)
// and total_weight is 0. Otherwise one work-group's lanes sum the losses and the weights in
// acc_t: output is the sum (2), or the sum divided by the weights (1, the mean), and
// total_weight the weights.
__kernel void nll_loss(const long samples, __global const elem_t* self, const long self_base,
                       const long2 self_stride, __global const long* target, const long target_base,
                       const long target_stride, __global const elem_t* weight,
                       const long weight_base, const long weight_stride, const int has_weight,
                       const long ignore_index, const int reduction, __global elem_t* output,
                       const long output_base, const long output_stride,
                       __global elem_t* total_weight, const long total_weight_base) {
  __local acc_t scratch[WG_SIZE];
  acc_t loss = 0, weights = 0;
  for (long i = LANE; i < samples; i += LANES) {
    const long t = target[target_base + i * target_stride];
    acc_t term = 0;
    if (t != ignore_index) {
      const acc_t w = has_weight ? (acc_t)LOAD(weight, weight_base + t * weight_stride) : 1;
      term = -w * LOAD(self, self_base + i * self_stride.s0 + t * self_stride.s1);
      weights += w;
    }
    if (reduction == 0) {
      STORE(output, output_base + i * output_stride, term);
    } else {
      loss += term;
    }
  }
  loss = sum_lanes(loss, scratch);
  weights = sum_lanes(weights, scratch);
  if (LANE != 0) return;
  if (reduction != 0) STORE(output, output_base, reduction == 1 ? loss / weights : loss);
  STORE(total_weight, total_weight_base, reduction == 0 ? 0 : weights);
}

// grad_input[i, c] is 0 but at sample i's target class t (not ignore_index), where it is
// -weight[t] times the sample's gradient: grad_output's element i where `per_sample` (no
// reduction over a batch), else its one element, divided by total_weight for the mean. A
// work-item per element of grad_input.
__kernel void nll_loss_backward(const long samples, const long classes, __global elem_t* out,
                                const long out_base, const long2 out_stride,
                                __global const elem_t* grad, const long grad_base,
                                const long grad_stride, __global const long* target,
                                const long target_base, const long target_stride,
                                __global const elem_t* weight, const long weight_base,
                                const long weight_stride, const int has_weight,
                                const long ignore_index, const int per_sample, const int mean,
                                __global const elem_t* total_weight, const long total_weight_base) {
  const long i = get_global_id(0);
  if (i >= samples * classes) return;
  const long sample = i / classes, c = i - sample * classes;
  const long t = target[target_base + sample * target_stride];
  acc_t value = 0;
  if (c == t && t != ignore_index) {
    const acc_t w = has_weight ? (acc_t)LOAD(weight, weight_base + t * weight_stride) : 1;
    acc_t gradient = LOAD(grad, grad_base + (per_sample ? sample * grad_stride : 0));
    if (mean) gradient /= LOAD(total_weight, total_weight_base);
    value = -w * gradient;
  }
  STORE(out, out_base + sample * out_stride.s0 + c * out_stride.s1, value);
}
