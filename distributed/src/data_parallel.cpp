// DataParallel: buckets of gradients, filled by post-accumulate-grad hooks as backward produces
// them, each all-reduced (mean) as soon as it is full; the hook that completes the last bucket
// waits for them all and writes the averages back into every parameter's grad().
#include <backplane/backplane.h>
#include <backplane/data_parallel.h>

#include <fmt/format.h>

#include <mutex>
#include <optional>

namespace bp::distributed {

namespace {

struct Bucket {
  std::vector<size_t> parameters;  // indices into State::parameters
  std::vector<int64_t> offsets;    // each parameter's first element in `flat`
  Tensor flat;                     // the bucket's gradients, one after another
  size_t ready = 0;                // parameters whose gradient is in `flat` this pass
  std::optional<Work> work;
};

}  // namespace

struct DataParallel::State {
  ProcessGroup* group = nullptr;
  int root = 0;
  std::vector<Tensor> parameters;
  std::vector<Tensor> buffers;
  std::vector<Bucket> buckets;
  std::vector<size_t> bucket_of;  // per parameter
  std::vector<size_t> slot_in;    // per parameter: its position in its bucket
  std::vector<bool> ready;        // per parameter, this pass
  size_t buckets_started = 0;
  std::vector<HookHandle> hooks;
  // Serialises the hooks, should two threads run backward passes through the model at once.
  std::mutex mutex;

  void on_gradient(size_t index);
  void finish_pass();
  std::string unready_parameters() const;
};

namespace {

void require_parameters(const std::vector<Tensor>& parameters) {
  if (parameters.empty()) {
    throw Error(
        "DataParallel: no parameters were given; pass the model's parameters, whose "
        "gradients it averages across the ranks");
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Tensor& parameter = parameters[i];
    if (!parameter.defined() || !parameter.is_leaf() || !parameter.requires_grad()) {
      throw Error(fmt::format(
          "DataParallel: parameter {} is not a leaf tensor that requires grad; pass the model's "
          "parameters themselves (made with requires_grad_())",
          i));
    }
  }
}

}  // namespace

std::string DataParallel::State::unready_parameters() const {
  std::string text;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (!ready[i]) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", i, parameters[i].str());
  }
  return text;
}

void DataParallel::State::on_gradient(size_t index) {
  const std::lock_guard lock(mutex);
  if (ready[index]) {
    throw Error(fmt::format(
        "DataParallel: parameter {} got a gradient twice before every parameter got one; the "
        "earlier backward pass left parameters without a gradient ({}). Every parameter must "
        "take part in the loss of every pass",
        index, unready_parameters()));
  }
  ready[index] = true;
  Bucket& bucket = buckets[bucket_of[index]];
  const Tensor& parameter = parameters[index];
  const int64_t offset = bucket.offsets[slot_in[index]];
  bucket.flat.slice(0, offset, offset + parameter.numel())
      .view(parameter.sizes())
      .copy_(parameter.grad());
  if (++bucket.ready < bucket.parameters.size()) return;
  bucket.work = group->all_reduce_async(bucket.flat, ReduceOp::Mean);
  if (++buckets_started == buckets.size()) finish_pass();
}

void DataParallel::State::finish_pass() {
  for (Bucket& bucket : buckets) {
    bucket.work->wait();
    bucket.work.reset();
    for (size_t slot = 0; slot < bucket.parameters.size(); ++slot) {
      Tensor& parameter = parameters[bucket.parameters[slot]];
      const int64_t offset = bucket.offsets[slot];
      parameter.mutable_grad().copy_(
          bucket.flat.slice(0, offset, offset + parameter.numel()).view(parameter.sizes()));
    }
    bucket.ready = 0;
  }
  buckets_started = 0;
  std::fill(ready.begin(), ready.end(), false);
}

DataParallel::DataParallel(ProcessGroup& group, std::vector<Tensor> parameters,
                           DataParallelOptions options, std::vector<Tensor> buffers)
    : state_(std::make_shared<State>()) {
  require_parameters(parameters);
  if (options.bucket_bytes <= 0) {
    throw Error(
        fmt::format("DataParallel: bucket_bytes is {}; it must be above 0", options.bucket_bytes));
  }
  State& state = *state_;
  state.group = &group;
  state.root = options.root;
  state.parameters = std::move(parameters);
  state.buffers = std::move(buffers);
  const size_t count = state.parameters.size();
  state.bucket_of.resize(count);
  state.slot_in.resize(count);
  state.ready.assign(count, false);
  {
    const NoGradGuard no_grad;
    std::vector<Work> works;
    for (Tensor& parameter : state.parameters)
      works.push_back(group.broadcast_async(parameter, options.root));
    for (const Work& work : works) work.wait();
  }
  broadcast_buffers();
  // Backward produces the last parameters' gradients first: buckets fill from the end.
  int64_t bucket_bytes = 0;
  for (size_t i = count; i-- > 0;) {
    const Tensor& parameter = state.parameters[i];
    const int64_t bytes = parameter.numel() * static_cast<int64_t>(parameter.element_size());
    const bool fits =
        !state.buckets.empty() && bucket_bytes + bytes <= options.bucket_bytes &&
        state.parameters[state.buckets.back().parameters.front()].device() == parameter.device() &&
        state.parameters[state.buckets.back().parameters.front()].dtype() == parameter.dtype();
    if (!fits) {
      state.buckets.emplace_back();
      bucket_bytes = 0;
    }
    Bucket& bucket = state.buckets.back();
    const int64_t offset =
        bucket.parameters.empty()
            ? 0
            : bucket.offsets.back() + state.parameters[bucket.parameters.back()].numel();
    state.bucket_of[i] = state.buckets.size() - 1;
    state.slot_in[i] = bucket.parameters.size();
    bucket.parameters.push_back(i);
    bucket.offsets.push_back(offset);
    bucket_bytes += bytes;
  }
  for (Bucket& bucket : state.buckets) {
    const Tensor& last = state.parameters[bucket.parameters.back()];
    bucket.flat = bp::empty({bucket.offsets.back() + last.numel()}, last.dtype(), last.device());
  }
  std::weak_ptr<State> weak = state_;
  for (size_t i = 0; i < count; ++i) {
    state.hooks.push_back(
        state.parameters[i].register_post_accumulate_grad_hook([weak, i](Tensor&) {
          if (const std::shared_ptr<State> alive = weak.lock()) alive->on_gradient(i);
        }));
  }
}

DataParallel::~DataParallel() {
  for (HookHandle& hook : state_->hooks) hook.remove();
}

const std::vector<Tensor>& DataParallel::parameters() const { return state_->parameters; }

void DataParallel::broadcast_buffers() {
  std::vector<Work> works;
  for (Tensor& buffer : state_->buffers)
    works.push_back(state_->group->broadcast_async(buffer, state_->root));
  for (const Work& work : works) work.wait();
}

std::vector<std::vector<size_t>> DataParallel::buckets() const {
  std::vector<std::vector<size_t>> result;
  for (const Bucket& bucket : state_->buckets) result.push_back(bucket.parameters);
  return result;
}

}  // namespace bp::distributed
