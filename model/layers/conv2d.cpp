// The 2-D convolution: im2col, then one GEMM for the batch; backward as two
// GEMMs and col2im, every sum in a fixed order.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "model/backend/cpu/gemm/gemm.hpp"
#include "model/layers/layer_ops.hpp"

namespace troupe::detail {

namespace {

class conv2d_op final : public layer_op {
public:
  conv2d_op(tensor_shape in, int filters, int kernel, int stride, bool same, activation_kind act)
    : in_(in), filters_(filters), kernel_(kernel), stride_(stride), act_(act),
      out_{conv2d_output_side(in.height, kernel, stride, same),
           conv2d_output_side(in.width, kernel, stride, same), filters},
      pad_top_(same ? padding_before(in.height, out_.height) : 0),
      pad_left_(same ? padding_before(in.width, out_.width) : 0),
      patch_(static_cast<size_t>(kernel) * kernel * in.channels) {}

  tensor_shape output_shape() const override { return out_; }
  size_t parameter_count() const override { return patch_ * filters_ + filters_; }

  void initialize(uint64_t seed, float* parameters) const override {
    const size_t area = static_cast<size_t>(kernel_) * kernel_;
    glorot_uniform(seed, patch_, area * filters_, parameters, patch_ * filters_);
    std::fill_n(parameters + patch_ * filters_, filters_, 0.0f);
  }

  void forward(const float* parameters, const float* x, float* y, size_t count,
               const pass_keys&) override {
    to_columns(x, count);
    const int rows = static_cast<int>(count * positions());
    gemm(false, false, rows, filters_, static_cast<int>(patch_), 1.0f, columns_.data(),
         parameters, 0.0f, y);
    const float* bias = parameters + patch_ * filters_;
    const bool relu = act_ == activation_kind::relu; // fused: one pass over y
    for (int r = 0; r < rows; ++r) {
      float* row = y + static_cast<size_t>(r) * filters_;
      for (int f = 0; f < filters_; ++f) {
        const float v = row[f] + bias[f];
        row[f] = relu && v < 0.0f ? 0.0f : v;
      }
    }
    if (act_ == activation_kind::none || relu)
      return;
    const size_t values = static_cast<size_t>(rows) * filters_;
    if (needs_input(act_))
      pre_.assign(y, y + values);
    activate(act_, y, y, values);
  }

  void backward(const float* parameters, const float*, const float* y, const float* dy,
                float* dx, float* dparameters, size_t count, const pass_keys&) override {
    const size_t rows = count * positions();
    dz_.resize(rows * filters_);
    activation_backward(act_, pre_.data(), y, dy, dz_.data(), dz_.size());
    gemm(true, false, static_cast<int>(patch_), filters_, static_cast<int>(rows), 1.0f,
         columns_.data(), dz_.data(), 0.0f, dparameters);
    float* dbias = dparameters + patch_ * filters_;
    std::fill_n(dbias, filters_, 0.0f);
    for (size_t r = 0; r < rows; ++r)
      for (int f = 0; f < filters_; ++f)
        dbias[f] += dz_[r * filters_ + f];
    if (dx == nullptr)
      return;
    dcolumns_.resize(rows * patch_);
    gemm(false, true, static_cast<int>(rows), static_cast<int>(patch_), filters_, 1.0f,
         dz_.data(), parameters, 0.0f, dcolumns_.data());
    from_columns(dx, count);
  }

private:
  size_t positions() const { return static_cast<size_t>(out_.height) * out_.width; }

  // TensorFlow's "same": the padding split with the smaller half first.
  int padding_before(int in, int out) const {
    return std::max((out - 1) * stride_ + kernel_ - in, 0) / 2;
  }

  // The input value under kernel tap (ky, kx) of output (oy, ox), channel 0;
  // -1 in the padding.
  std::ptrdiff_t input_at(int oy, int ox, int ky, int kx) const {
    const int y = oy * stride_ + ky - pad_top_;
    const int x = ox * stride_ + kx - pad_left_;
    if (y < 0 || y >= in_.height || x < 0 || x >= in_.width)
      return -1;
    return (static_cast<std::ptrdiff_t>(y) * in_.width + x) * in_.channels;
  }

  // columns: (count x positions, K x K x channels), each row one output's patch.
  void to_columns(const float* x, size_t count) {
    columns_.resize(count * positions() * patch_);
    float* row = columns_.data();
    for (size_t n = 0; n < count; ++n) {
      const float* sample = x + n * in_.size();
      for (int oy = 0; oy < out_.height; ++oy)
        for (int ox = 0; ox < out_.width; ++ox)
          for (int ky = 0; ky < kernel_; ++ky)
            for (int kx = 0; kx < kernel_; ++kx, row += in_.channels) {
              const auto at = input_at(oy, ox, ky, kx);
              if (at < 0)
                std::fill_n(row, in_.channels, 0.0f);
              else if (in_.channels >= 8)
                std::copy_n(sample + at, in_.channels, row);
              else // a loop rather than a call per tap for a few channels
                for (int c = 0; c < in_.channels; ++c)
                  row[c] = sample[at + c];
            }
    }
  }

  // dx: each patch's gradient added back where the patch was read, in order.
  void from_columns(float* dx, size_t count) const {
    std::fill_n(dx, count * in_.size(), 0.0f);
    const float* row = dcolumns_.data();
    for (size_t n = 0; n < count; ++n) {
      float* sample = dx + n * in_.size();
      for (int oy = 0; oy < out_.height; ++oy)
        for (int ox = 0; ox < out_.width; ++ox)
          for (int ky = 0; ky < kernel_; ++ky)
            for (int kx = 0; kx < kernel_; ++kx, row += in_.channels) {
              const auto at = input_at(oy, ox, ky, kx);
              for (int c = 0; at >= 0 && c < in_.channels; ++c)
                sample[at + c] += row[c];
            }
    }
  }

  tensor_shape in_;
  int filters_;
  int kernel_;
  int stride_;
  activation_kind act_;
  tensor_shape out_;
  int pad_top_;
  int pad_left_;
  size_t patch_;
  std::vector<float> columns_;  // of the last forward pass
  std::vector<float> pre_;      // its values before the activation
  std::vector<float> dz_;
  std::vector<float> dcolumns_;
};

} // namespace

int conv2d_output_side(int in, int kernel, int stride, bool same) {
  return same ? (in + stride - 1) / stride : (in - kernel) / stride + 1;
}

std::unique_ptr<layer_op> make_conv2d(tensor_shape in, int filters, int kernel, int stride,
                                      bool same, activation_kind act) {
  return std::make_unique<conv2d_op>(in, filters, kernel, stride, same, act);
}

} // namespace troupe::detail
