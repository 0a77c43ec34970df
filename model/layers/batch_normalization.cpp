// Batch normalization, as Keras's BatchNormalization over the last axis: in
// training each channel to the batch's mean 0 and variance 1 (over every
// sample and position the replica computes), then scaled by gamma and
// shifted by beta; in evaluation and prediction by the moving mean and
// variance instead. The moving statistics are state: backward asks the
// store to move them toward this batch's statistics, Keras's
// moving = moving * momentum + batch * (1 - momentum), and the store
// averages what the round's replicas ask for (model::state_spans).
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/layers/layer_ops.hpp"

namespace troupe::detail {

namespace {

constexpr float batch_norm_epsilon = 1e-3f; // Keras's defaults
constexpr float batch_norm_momentum = 0.99f;

class batch_normalization_op final : public layer_op {
public:
  explicit batch_normalization_op(tensor_shape in) : shape_(in) {}

  tensor_shape output_shape() const override { return shape_; }
  // gamma, beta, moving mean, moving variance: Keras's order of the weights
  size_t parameter_count() const override { return 4 * channels(); }
  size_t state_count() const override { return 2 * channels(); }

  void initialize(uint64_t, float* parameters) const override {
    const size_t c = channels();
    std::fill_n(parameters, c, 1.0f);         // gamma
    std::fill_n(parameters + c, c, 0.0f);     // beta
    std::fill_n(parameters + 2 * c, c, 0.0f); // moving mean
    std::fill_n(parameters + 3 * c, c, 1.0f); // moving variance
  }

  void forward(const float* parameters, const float* x, float* y, size_t count,
               const pass_keys& keys) override {
    const size_t c = channels();
    const size_t positions = count * shape_.size() / c;
    if (keys.training && positions > 0)
      batch_statistics(x, positions);
    else
      moving_statistics(parameters);
    const float* gamma = parameters;
    const float* beta = parameters + c;
    normalized_.resize(positions * c);
    for (size_t p = 0; p < positions; ++p)
      for (size_t k = 0; k < c; ++k) {
        const float xhat = (x[p * c + k] - mean_[k]) * inverse_deviation_[k];
        normalized_[p * c + k] = xhat;
        y[p * c + k] = gamma[k] * xhat + beta[k];
      }
  }

  void backward(const float* parameters, const float*, const float*, const float* dy,
                float* dx, float* dparameters, size_t count, const pass_keys&) override {
    const size_t c = channels();
    const size_t positions = count * shape_.size() / c;
    std::vector<double> dgamma(c, 0.0), dbeta(c, 0.0);
    for (size_t p = 0; p < positions; ++p)
      for (size_t k = 0; k < c; ++k) {
        dgamma[k] += static_cast<double>(dy[p * c + k]) * normalized_[p * c + k];
        dbeta[k] += dy[p * c + k];
      }
    const float* gamma = parameters;
    for (size_t k = 0; k < c; ++k) {
      dparameters[k] = static_cast<float>(dgamma[k]);
      dparameters[c + k] = static_cast<float>(dbeta[k]);
      // The change asked of the moving statistics: current minus new.
      dparameters[2 * c + k] = (1.0f - batch_norm_momentum) * (parameters[2 * c + k] - mean_[k]);
      dparameters[3 * c + k] =
        (1.0f - batch_norm_momentum) * (parameters[3 * c + k] - variance_[k]);
    }
    if (dx == nullptr || positions == 0)
      return;
    const double n = static_cast<double>(positions);
    for (size_t p = 0; p < positions; ++p)
      for (size_t k = 0; k < c; ++k) {
        const double scale = static_cast<double>(gamma[k]) * inverse_deviation_[k] / n;
        dx[p * c + k] = static_cast<float>(
          scale * (n * dy[p * c + k] - dbeta[k] - normalized_[p * c + k] * dgamma[k]));
      }
  }

private:
  size_t channels() const { return static_cast<size_t>(shape_.channels); }

  // The batch's mean and (biased) variance per channel, summed in double in
  // position order.
  void batch_statistics(const float* x, size_t positions) {
    const size_t c = channels();
    std::vector<double> sum(c, 0.0), squares(c, 0.0);
    for (size_t p = 0; p < positions; ++p)
      for (size_t k = 0; k < c; ++k)
        sum[k] += x[p * c + k];
    mean_.resize(c);
    for (size_t k = 0; k < c; ++k)
      mean_[k] = static_cast<float>(sum[k] / static_cast<double>(positions));
    for (size_t p = 0; p < positions; ++p)
      for (size_t k = 0; k < c; ++k) {
        const double centred = static_cast<double>(x[p * c + k]) - mean_[k];
        squares[k] += centred * centred;
      }
    variance_.resize(c);
    inverse_deviation_.resize(c);
    for (size_t k = 0; k < c; ++k) {
      const double variance = squares[k] / static_cast<double>(positions);
      variance_[k] = static_cast<float>(variance);
      inverse_deviation_[k] =
        static_cast<float>(1.0 / std::sqrt(variance + static_cast<double>(batch_norm_epsilon)));
    }
  }

  void moving_statistics(const float* parameters) {
    const size_t c = channels();
    mean_.assign(parameters + 2 * c, parameters + 3 * c);
    variance_.assign(parameters + 3 * c, parameters + 4 * c);
    inverse_deviation_.resize(c);
    for (size_t k = 0; k < c; ++k)
      inverse_deviation_[k] = static_cast<float>(
        1.0 / std::sqrt(static_cast<double>(variance_[k]) + batch_norm_epsilon));
  }

  tensor_shape shape_;
  // Of the last forward pass: per channel, and x hat per value.
  std::vector<float> mean_, variance_, inverse_deviation_;
  std::vector<float> normalized_;
};

} // namespace

std::unique_ptr<layer_op> make_batch_normalization(tensor_shape in) {
  return std::make_unique<batch_normalization_op>(in);
}

} // namespace troupe::detail
