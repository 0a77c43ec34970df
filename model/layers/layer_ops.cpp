// Max pooling, flatten, dropout and dense layers, and Glorot's initializer.
#include "model/layers/layer_ops.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/backend/cpu/gemm/gemm.hpp"
#include "model/layers/dropout_mask.hpp"
#include "model/random.hpp"

namespace troupe::detail {

namespace {

class max_pool2d_op final : public layer_op {
public:
  max_pool2d_op(tensor_shape in, int pool)
    : in_(in), pool_(pool), out_{in.height / pool, in.width / pool, in.channels} {}

  tensor_shape output_shape() const override { return out_; }

  void forward(const float*, const float* x, float* y, size_t count,
               const pass_keys&) override {
    winners_.resize(count * out_.size());
    size_t o = 0;
    for (size_t n = 0; n < count; ++n)
      for (int oy = 0; oy < out_.height; ++oy)
        for (int ox = 0; ox < out_.width; ++ox)
          for (int c = 0; c < in_.channels; ++c, ++o) {
            size_t best = at(n, oy * pool_, ox * pool_, c);
            for (int ky = 0; ky < pool_; ++ky)
              for (int kx = 0; kx < pool_; ++kx) {
                const size_t i = at(n, oy * pool_ + ky, ox * pool_ + kx, c);
                if (x[i] > x[best])
                  best = i;
              }
            winners_[o] = best;
            y[o] = x[best];
          }
  }

  void backward(const float*, const float*, const float*, const float* dy, float* dx, float*,
                size_t count, const pass_keys&) override {
    if (dx == nullptr)
      return;
    std::fill_n(dx, count * in_.size(), 0.0f);
    for (size_t o = 0; o < count * out_.size(); ++o)
      dx[winners_[o]] += dy[o];
  }

private:
  size_t at(size_t n, int row, int column, int channel) const {
    return n * in_.size() + (static_cast<size_t>(row) * in_.width + column) * in_.channels +
           channel;
  }

  tensor_shape in_;
  int pool_;
  tensor_shape out_;
  std::vector<size_t> winners_; // of the last forward pass: each output's input
};

class flatten_op final : public layer_op {
public:
  explicit flatten_op(tensor_shape in) : out_{1, 1, static_cast<int>(in.size())} {}

  tensor_shape output_shape() const override { return out_; }

  void forward(const float*, const float* x, float* y, size_t count,
               const pass_keys&) override {
    std::copy_n(x, count * out_.size(), y);
  }

  void backward(const float*, const float*, const float*, const float* dy, float* dx, float*,
                size_t count, const pass_keys&) override {
    if (dx != nullptr)
      std::copy_n(dy, count * out_.size(), dx);
  }

private:
  tensor_shape out_;
};

class dropout_op final : public layer_op {
public:
  dropout_op(tensor_shape in, float rate)
    : shape_(in), rate_(rate), scale_(1.0f / (1.0f - rate)) {}

  tensor_shape output_shape() const override { return shape_; }

  void forward(const float*, const float* x, float* y, size_t count,
               const pass_keys& keys) override {
    const size_t size = shape_.size();
    if (!keys.training || rate_ == 0.0f) {
      std::copy_n(x, count * size, y);
      return;
    }
    kept_.resize(count * size);
    for (size_t n = 0; n < count; ++n) {
      const uint64_t index = keys.indices != nullptr ? keys.indices[n] : n;
      const uint64_t sample = dropout_mask::sample_seed(keys.seed, keys.step, index);
      for (size_t j = 0; j < size; ++j) {
        const bool kept = dropout_mask::kept(sample, j, rate_);
        kept_[n * size + j] = kept;
        y[n * size + j] = kept ? x[n * size + j] * scale_ : 0.0f;
      }
    }
  }

  void backward(const float*, const float*, const float*, const float* dy, float* dx, float*,
                size_t count, const pass_keys& keys) override {
    if (dx == nullptr)
      return;
    const size_t total = count * shape_.size();
    if (!keys.training || rate_ == 0.0f) {
      std::copy_n(dy, total, dx);
      return;
    }
    for (size_t i = 0; i < total; ++i)
      dx[i] = kept_[i] ? dy[i] * scale_ : 0.0f;
  }

private:
  tensor_shape shape_;
  float rate_;
  float scale_;
  std::vector<bool> kept_; // of the last training pass
};

class dense_op final : public layer_op {
public:
  dense_op(tensor_shape in, int units, activation_kind act)
    : inputs_(static_cast<int>(in.size())), units_(units), act_(act) {}

  tensor_shape output_shape() const override { return tensor_shape{1, 1, units_}; }
  size_t parameter_count() const override {
    return static_cast<size_t>(inputs_) * units_ + units_;
  }

  void initialize(uint64_t seed, float* parameters) const override {
    const size_t weights = static_cast<size_t>(inputs_) * units_;
    glorot_uniform(seed, inputs_, units_, parameters, weights);
    std::fill_n(parameters + weights, units_, 0.0f);
  }

  void forward(const float* parameters, const float* x, float* y, size_t count,
               const pass_keys&) override {
    gemm(false, false, static_cast<int>(count), units_, inputs_, 1.0f, x, parameters, 0.0f, y);
    const float* bias = parameters + static_cast<size_t>(inputs_) * units_;
    for (size_t n = 0; n < count; ++n)
      for (int u = 0; u < units_; ++u)
        y[n * units_ + u] += bias[u];
    if (act_ == activation_kind::none)
      return;
    if (needs_input(act_))
      pre_.assign(y, y + count * units_);
    activate(act_, y, y, count * units_);
  }

  void backward(const float* parameters, const float* x, const float* y, const float* dy,
                float* dx, float* dparameters, size_t count, const pass_keys&) override {
    dz_.resize(count * units_);
    activation_backward(act_, pre_.data(), y, dy, dz_.data(), dz_.size());
    gemm(true, false, inputs_, units_, static_cast<int>(count), 1.0f, x, dz_.data(), 0.0f,
         dparameters);
    float* dbias = dparameters + static_cast<size_t>(inputs_) * units_;
    std::fill_n(dbias, units_, 0.0f);
    for (size_t n = 0; n < count; ++n)
      for (int u = 0; u < units_; ++u)
        dbias[u] += dz_[n * units_ + u];
    if (dx != nullptr)
      gemm(false, true, static_cast<int>(count), inputs_, units_, 1.0f, dz_.data(),
           parameters, 0.0f, dx);
  }

private:
  int inputs_;
  int units_;
  activation_kind act_;
  std::vector<float> pre_; // the last forward pass's values before the activation
  std::vector<float> dz_;
};

// Averages each channel over windows: P x P with stride P, or the whole
// height and width (global).
class average_pool_op final : public layer_op {
public:
  average_pool_op(tensor_shape in, int pool_height, int pool_width)
    : in_(in), pool_height_(pool_height), pool_width_(pool_width),
      out_{in.height / pool_height, in.width / pool_width, in.channels},
      share_(1.0f / static_cast<float>(pool_height * pool_width)) {}

  tensor_shape output_shape() const override { return out_; }

  void forward(const float*, const float* x, float* y, size_t count,
               const pass_keys&) override {
    size_t o = 0;
    for (size_t n = 0; n < count; ++n)
      for (int oy = 0; oy < out_.height; ++oy)
        for (int ox = 0; ox < out_.width; ++ox)
          for (int c = 0; c < in_.channels; ++c, ++o) {
            float sum = 0.0f;
            for (int ky = 0; ky < pool_height_; ++ky)
              for (int kx = 0; kx < pool_width_; ++kx)
                sum += x[at(n, oy * pool_height_ + ky, ox * pool_width_ + kx, c)];
            y[o] = sum * share_;
          }
  }

  void backward(const float*, const float*, const float*, const float* dy, float* dx, float*,
                size_t count, const pass_keys&) override {
    if (dx == nullptr)
      return;
    std::fill_n(dx, count * in_.size(), 0.0f);
    size_t o = 0;
    for (size_t n = 0; n < count; ++n)
      for (int oy = 0; oy < out_.height; ++oy)
        for (int ox = 0; ox < out_.width; ++ox)
          for (int c = 0; c < in_.channels; ++c, ++o)
            for (int ky = 0; ky < pool_height_; ++ky)
              for (int kx = 0; kx < pool_width_; ++kx)
                dx[at(n, oy * pool_height_ + ky, ox * pool_width_ + kx, c)] = dy[o] * share_;
  }

private:
  size_t at(size_t n, int row, int column, int channel) const {
    return n * in_.size() + (static_cast<size_t>(row) * in_.width + column) * in_.channels +
           channel;
  }

  tensor_shape in_;
  int pool_height_;
  int pool_width_;
  tensor_shape out_;
  float share_;
};

class activation_op final : public layer_op {
public:
  activation_op(tensor_shape in, activation_kind act) : shape_(in), act_(act) {}

  tensor_shape output_shape() const override { return shape_; }

  void forward(const float*, const float* x, float* y, size_t count,
               const pass_keys&) override {
    activate(act_, x, y, count * shape_.size());
  }

  void backward(const float*, const float* x, const float* y, const float* dy, float* dx,
                float*, size_t count, const pass_keys&) override {
    if (dx != nullptr)
      activation_backward(act_, x, y, dy, dx, count * shape_.size());
  }

private:
  tensor_shape shape_;
  activation_kind act_;
};

} // namespace

void glorot_uniform(uint64_t seed, size_t fan_in, size_t fan_out, float* out, size_t count) {
  random_stream random(seed);
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  for (size_t i = 0; i < count; ++i)
    out[i] = (2.0f * random.unit_float() - 1.0f) * limit;
}

std::unique_ptr<layer_op> make_max_pool2d(tensor_shape in, int pool) {
  return std::make_unique<max_pool2d_op>(in, pool);
}

std::unique_ptr<layer_op> make_average_pool2d(tensor_shape in, int pool) {
  return std::make_unique<average_pool_op>(in, pool, pool);
}

std::unique_ptr<layer_op> make_global_average_pool2d(tensor_shape in) {
  return std::make_unique<average_pool_op>(in, in.height, in.width);
}

std::unique_ptr<layer_op> make_activation(tensor_shape in, activation_kind act) {
  return std::make_unique<activation_op>(in, act);
}

std::unique_ptr<layer_op> make_flatten(tensor_shape in) {
  return std::make_unique<flatten_op>(in);
}

std::unique_ptr<layer_op> make_dropout(tensor_shape in, float rate) {
  return std::make_unique<dropout_op>(in, rate);
}

std::unique_ptr<layer_op> make_dense(tensor_shape in, int units, activation_kind act) {
  return std::make_unique<dense_op>(in, units, act);
}

} // namespace troupe::detail
