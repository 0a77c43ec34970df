// The CUDA twins of the layers that touch each value alone: flatten,
// dropout (the CPU's mask, from model/layers/dropout_mask.hpp) and an
// activation on its own.
#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/backend/cuda/layers/cuda_layer_factories.cuh"
#include "model/backend/cuda/layers/cuda_layer_kernels.cuh"

namespace troupe::detail::cuda_detail {

namespace {

void copy_on_device(const cuda_context& context, const float* from, float* to, size_t count) {
  if (count > 0)
    TROUPE_CUDA_CHECK(cudaMemcpyAsync(to, from, count * sizeof(float),
                                      cudaMemcpyDeviceToDevice, context.stream));
}

class cuda_flatten final : public cuda_layer {
public:
  cuda_flatten(tensor_shape in, const cuda_context& context)
    : context_(context), out_{1, 1, static_cast<int>(in.size())} {}

  tensor_shape output_shape() const override { return out_; }

  void forward(const float*, const float* x, float* y, size_t count,
               const device_pass_keys&) override {
    copy_on_device(context_, x, y, count * out_.size());
  }

  void backward(const float*, const float*, const float*, const float* dy, float* dx, float*,
                size_t count, const device_pass_keys&) override {
    if (dx != nullptr)
      copy_on_device(context_, dy, dx, count * out_.size());
  }

private:
  cuda_context context_;
  tensor_shape out_;
};

// The mask is drawn again in backward from the same keys rather than kept.
class cuda_dropout final : public cuda_layer {
public:
  cuda_dropout(tensor_shape in, float rate, const cuda_context& context)
    : context_(context), shape_(in), rate_(rate), scale_(1.0f / (1.0f - rate)) {}

  tensor_shape output_shape() const override { return shape_; }

  void forward(const float*, const float* x, float* y, size_t count,
               const device_pass_keys& keys) override {
    apply(x, y, count, keys);
  }

  void backward(const float*, const float*, const float*, const float* dy, float* dx, float*,
                size_t count, const device_pass_keys& keys) override {
    if (dx != nullptr)
      apply(dy, dx, count, keys);
  }

private:
  void apply(const float* in, float* out, size_t count, const device_pass_keys& keys) const {
    if (!keys.training || rate_ == 0.0f) {
      copy_on_device(context_, in, out, count * shape_.size());
      return;
    }
    launch_dropout(context_.stream, in, out, count, shape_.size(), keys.seed, keys.step,
                   keys.indices, rate_, scale_);
  }

  cuda_context context_;
  tensor_shape shape_;
  float rate_;
  float scale_;
};

class cuda_activation final : public cuda_layer {
public:
  cuda_activation(tensor_shape in, activation_kind act, const cuda_context& context)
    : context_(context), shape_(in), act_(act) {}

  tensor_shape output_shape() const override { return shape_; }

  void forward(const float*, const float* x, float* y, size_t count,
               const device_pass_keys&) override {
    launch_activate(context_.stream, act_, x, y, count * shape_.size());
  }

  void backward(const float*, const float* x, const float* y, const float* dy, float* dx,
                float*, size_t count, const device_pass_keys&) override {
    if (dx != nullptr)
      launch_activation_backward(context_.stream, act_, x, y, dy, dx, count * shape_.size());
  }

private:
  cuda_context context_;
  tensor_shape shape_;
  activation_kind act_;
};

} // namespace

std::unique_ptr<cuda_layer> make_cuda_flatten(tensor_shape in, const cuda_context& context) {
  return std::make_unique<cuda_flatten>(in, context);
}

std::unique_ptr<cuda_layer> make_cuda_dropout(tensor_shape in, float rate,
                                              const cuda_context& context) {
  return std::make_unique<cuda_dropout>(in, rate, context);
}

std::unique_ptr<cuda_layer> make_cuda_activation(tensor_shape in, activation_kind act,
                                                 const cuda_context& context) {
  return std::make_unique<cuda_activation>(in, act, context);
}

} // namespace troupe::detail::cuda_detail
