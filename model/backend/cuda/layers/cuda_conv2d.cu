// The CUDA twin of conv2d: an im2col kernel and one cuBLAS GEMM for the batch;
// backward as two GEMMs, the bias's column sums and col2im as a gather, where
// each input value adds the columns that read it in the CPU's order.
#include <algorithm>

#include "model/backend/cuda/cuda_gemm.cuh"
#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/backend/cuda/layers/cuda_layer_factories.cuh"
#include "model/backend/cuda/layers/cuda_layer_kernels.cuh"

namespace troupe::detail::cuda_detail {

namespace {

constexpr int threads = 256;

// What the kernels need of the convolution's geometry.
struct conv_geometry {
  int in_height, in_width, channels;
  int out_height, out_width;
  int kernel, stride, pad_top, pad_left;

  __host__ __device__ size_t patch() const {
    return static_cast<size_t>(kernel) * kernel * channels;
  }
  __host__ __device__ size_t positions() const {
    return static_cast<size_t>(out_height) * out_width;
  }
  __host__ __device__ size_t in_size() const {
    return static_cast<size_t>(in_height) * in_width * channels;
  }
};

// columns: (count x positions, K x K x channels), each row one output's patch.
__global__ void im2col_kernel(conv_geometry g, const float* x, size_t count, float* columns) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t patch = g.patch();
  if (i >= count * g.positions() * patch)
    return;
  const size_t row = i / patch;
  const int p = static_cast<int>(i % patch);
  const int c = p % g.channels;
  const int kx = p / g.channels % g.kernel;
  const int ky = p / g.channels / g.kernel;
  const size_t n = row / g.positions();
  const int position = static_cast<int>(row % g.positions());
  const int y = position / g.out_width * g.stride + ky - g.pad_top;
  const int x_at = position % g.out_width * g.stride + kx - g.pad_left;
  const bool inside = y >= 0 && y < g.in_height && x_at >= 0 && x_at < g.in_width;
  columns[i] = inside
                 ? x[n * g.in_size() + (static_cast<size_t>(y) * g.in_width + x_at) * g.channels + c]
                 : 0.0f;
}

// dx: one thread per input value, adding the patch entries that read it.
// Taps run from the last to the first, which visits the outputs that read
// the value in row order: the order in which the CPU's col2im adds them.
__global__ void col2im_kernel(conv_geometry g, const float* dcolumns, size_t count, float* dx) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= count * g.in_size())
    return;
  const size_t n = i / g.in_size();
  const int at = static_cast<int>(i % g.in_size());
  const int c = at % g.channels;
  const int x_at = at / g.channels % g.in_width;
  const int y = at / g.channels / g.in_width;
  const size_t patch = g.patch();
  float sum = 0.0f;
  for (int ky = g.kernel - 1; ky >= 0; --ky) {
    const int oy_stride = y + g.pad_top - ky;
    if (oy_stride < 0 || oy_stride % g.stride != 0 || oy_stride / g.stride >= g.out_height)
      continue;
    const int oy = oy_stride / g.stride;
    for (int kx = g.kernel - 1; kx >= 0; --kx) {
      const int ox_stride = x_at + g.pad_left - kx;
      if (ox_stride < 0 || ox_stride % g.stride != 0 || ox_stride / g.stride >= g.out_width)
        continue;
      const size_t row = n * g.positions() + static_cast<size_t>(oy) * g.out_width +
                         ox_stride / g.stride;
      sum += dcolumns[row * patch + (static_cast<size_t>(ky) * g.kernel + kx) * g.channels + c];
    }
  }
  dx[i] = sum;
}

class cuda_conv2d final : public cuda_layer {
public:
  cuda_conv2d(tensor_shape in, const layer_spec& l, const cuda_context& context)
    : context_(context), filters_(l.units), act_(l.act) {
    const int out_height = side(in.height, l.kernel, l.stride, l.same);
    const int out_width = side(in.width, l.kernel, l.stride, l.same);
    geometry_ = conv_geometry{in.height, in.width, in.channels, out_height, out_width,
                              l.kernel, l.stride,
                              l.same ? pad_before(in.height, out_height, l) : 0,
                              l.same ? pad_before(in.width, out_width, l) : 0};
  }

  tensor_shape output_shape() const override {
    return tensor_shape{geometry_.out_height, geometry_.out_width, filters_};
  }
  size_t parameter_count() const override { return geometry_.patch() * filters_ + filters_; }

  void forward(const float* parameters, const float* x, float* y, size_t count,
               const device_pass_keys&) override {
    const size_t rows = count * geometry_.positions();
    const size_t patch = geometry_.patch();
    float* columns = columns_.reserve(rows * patch);
    if (rows * patch > 0) {
      im2col_kernel<<<blocks_for(rows * patch, threads), threads, 0, context_.stream>>>(
        geometry_, x, count, columns);
      TROUPE_CUDA_CHECK_LAUNCH("im2col_kernel");
    }
    row_major_gemm(context_.blas, false, false, static_cast<int>(rows), filters_,
                   static_cast<int>(patch), 1.0f, columns, parameters, 0.0f, y);
    float* pre = backward_reads_input(act_) ? pre_.reserve(rows * filters_) : nullptr;
    launch_add_bias_activate(context_.stream, act_, y, pre, parameters + patch * filters_,
                             rows, filters_);
  }

  void backward(const float* parameters, const float*, const float* y, const float* dy,
                float* dx, float* dparameters, size_t count, const device_pass_keys&) override {
    const size_t rows = count * geometry_.positions();
    const size_t patch = geometry_.patch();
    float* dz = dz_.reserve(rows * filters_);
    launch_activation_backward(context_.stream, act_, pre_.get(), y, dy, dz, rows * filters_);
    row_major_gemm(context_.blas, true, false, static_cast<int>(patch), filters_,
                   static_cast<int>(rows), 1.0f, columns_.get(), dz, 0.0f, dparameters);
    launch_column_sums(context_.stream, dz, rows, filters_, dparameters + patch * filters_);
    if (dx == nullptr)
      return;
    float* dcolumns = dcolumns_.reserve(rows * patch);
    row_major_gemm(context_.blas, false, true, static_cast<int>(rows), static_cast<int>(patch),
                   filters_, 1.0f, dz, parameters, 0.0f, dcolumns);
    const size_t inputs = count * geometry_.in_size();
    if (inputs == 0)
      return;
    col2im_kernel<<<blocks_for(inputs, threads), threads, 0, context_.stream>>>(
      geometry_, dcolumns, count, dx);
    TROUPE_CUDA_CHECK_LAUNCH("col2im_kernel");
  }

private:
  static int side(int in, int kernel, int stride, bool same) {
    return same ? (in + stride - 1) / stride : (in - kernel) / stride + 1;
  }

  // TensorFlow's "same": the padding split with the smaller half first.
  static int pad_before(int in, int out, const layer_spec& l) {
    return std::max((out - 1) * l.stride + l.kernel - in, 0) / 2;
  }

  cuda_context context_;
  int filters_;
  activation_kind act_;
  conv_geometry geometry_{};
  device_buffer<float> columns_; // of the last forward pass
  device_buffer<float> pre_;     // its values before the activation (gelu)
  device_buffer<float> dz_;
  device_buffer<float> dcolumns_;
};

} // namespace

std::unique_ptr<cuda_layer> make_cuda_conv2d(const layer_spec& l, tensor_shape in,
                                             const cuda_context& context) {
  return std::make_unique<cuda_conv2d>(in, l, context);
}

} // namespace troupe::detail::cuda_detail
