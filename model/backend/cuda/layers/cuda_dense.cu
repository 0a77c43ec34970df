// The CUDA twin of the dense layer: a cuBLAS GEMM, the bias and the
// activation; backward as two GEMMs and the bias's column sums.
#include "model/backend/cuda/cuda_gemm.cuh"
#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/backend/cuda/layers/cuda_layer_factories.cuh"
#include "model/backend/cuda/layers/cuda_layer_kernels.cuh"

namespace troupe::detail::cuda_detail {

namespace {

class cuda_dense final : public cuda_layer {
public:
  cuda_dense(tensor_shape in, int units, activation_kind act, const cuda_context& context)
    : context_(context), inputs_(static_cast<int>(in.size())), units_(units), act_(act) {}

  tensor_shape output_shape() const override { return tensor_shape{1, 1, units_}; }
  size_t parameter_count() const override { return weights() + units_; }

  // x: (count, inputs), kernel: (inputs, units), y: (count, units)
  void forward(const float* parameters, const float* x, float* y, size_t count,
               const device_pass_keys&) override {
    row_major_gemm(context_.blas, false, false, static_cast<int>(count), units_, inputs_, 1.0f,
                   x, parameters, 0.0f, y);
    float* pre = backward_reads_input(act_) ? pre_.reserve(count * units_) : nullptr;
    launch_add_bias_activate(context_.stream, act_, y, pre, parameters + weights(), count,
                             units_);
  }

  void backward(const float* parameters, const float* x, const float* y, const float* dy,
                float* dx, float* dparameters, size_t count, const device_pass_keys&) override {
    float* dz = dz_.reserve(count * units_);
    launch_activation_backward(context_.stream, act_, pre_.get(), y, dy, dz, count * units_);
    row_major_gemm(context_.blas, true, false, inputs_, units_, static_cast<int>(count), 1.0f,
                   x, dz, 0.0f, dparameters);
    launch_column_sums(context_.stream, dz, count, units_, dparameters + weights());
    if (dx != nullptr)
      row_major_gemm(context_.blas, false, true, static_cast<int>(count), inputs_, units_, 1.0f,
                     dz, parameters, 0.0f, dx);
  }

private:
  size_t weights() const { return static_cast<size_t>(inputs_) * units_; }

  cuda_context context_;
  int inputs_;
  int units_;
  activation_kind act_;
  device_buffer<float> pre_; // the last forward pass's values before the activation (gelu)
  device_buffer<float> dz_;
};

} // namespace

std::unique_ptr<cuda_layer> make_cuda_dense(tensor_shape in, int units, activation_kind act,
                                            const cuda_context& context) {
  return std::make_unique<cuda_dense>(in, units, act, context);
}

} // namespace troupe::detail::cuda_detail
