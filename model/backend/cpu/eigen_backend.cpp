// The CPU reference backend: Troupe's own GEMM kernels (model/backend/cpu/gemm,
// the same bits on every host of a family), Eigen for the elementwise ops.
#include "model/backend/cpu/eigen_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include <Eigen/Core>

#include "model/backend/cpu/gemm/gemm.hpp"
#include "model/backend/cpu/adam_kernel.hpp"
#include "model/finite_check.hpp"
#include "model/backend/resident_ops.hpp"

namespace troupe::detail {

namespace {

using row_matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using matrix_map = Eigen::Map<row_matrix>;
using const_matrix_map = Eigen::Map<const row_matrix>;
using const_vector_map = Eigen::Map<const Eigen::RowVectorXf>;

class eigen_backend final : public backend, public resident_loop_ops {
public:
  std::string name() const override { return "cpu"; }
  bool host_memory() const override { return true; }

  void* allocate(size_t bytes) override {
    // 64-byte alignment keeps Eigen's packets aligned; round up as aligned_alloc wants.
    void* ptr = std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64));
    if (ptr == nullptr)
      throw std::bad_alloc{};
    return ptr;
  }
  void release(void* ptr) noexcept override { std::free(ptr); }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void fill_zero(void* dst, size_t bytes) override { std::memset(dst, 0, bytes); }

  void weighted_sum(const std::vector<weighted_gradient>& terms, size_t count,
                    float* out) override {
    weighted_gradient_sum(terms, 0, count, out);
  }

  bool has_non_finite(const float* values, size_t count) override {
    return troupe::detail::has_non_finite(values, count);
  }

  void flag_non_finite(const float* values, size_t count, float* flag) override {
    if (troupe::detail::has_non_finite(values, count))
      *flag = 1.0f;
  }

  void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
            const float* a, const float* b, float beta, float* c) override {
    troupe::detail::gemm(transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
  }

  void bias_activation(float* y, const float* bias, int rows, int cols,
                       activation act) override {
    matrix_map out(y, rows, cols);
    out.rowwise() += const_vector_map(bias, cols);
    if (act == activation::relu)
      out = out.cwiseMax(0.0f);
  }

  void activation_backward(float* dy, const float* y, size_t count,
                           activation act) override {
    if (act != activation::relu)
      return;
    for (size_t i = 0; i < count; ++i)
      dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
  }

  void bias_gradient(const float* dy, int rows, int cols, float* db) override {
    // A plain loop, not Eigen's colwise().sum(): Eigen's reduction order
    // depends on the pointers' alignment, which broke bitwise reproducibility.
    std::fill(db, db + cols, 0.0f);
    for (int r = 0; r < rows; ++r) {
      const float* __restrict row = dy + static_cast<size_t>(r) * cols;
      for (int c = 0; c < cols; ++c)
        db[c] += row[c];
    }
  }

  void softmax_cross_entropy(const float* logits, const int32_t* labels, int rows,
                             int classes, float scale, float* dlogits,
                             float* stats) override {
    double loss_sum = 0.0;
    int64_t correct = 0;
    for (int r = 0; r < rows; ++r) {
      const float* z = logits + static_cast<size_t>(r) * classes;
      int argmax = 0;
      for (int c = 1; c < classes; ++c)
        if (z[c] > z[argmax])
          argmax = c;
      const float max = z[argmax];
      float sum = 0.0f;
      for (int c = 0; c < classes; ++c)
        sum += std::exp(z[c] - max);
      const int label = labels[r];
      loss_sum += static_cast<double>(std::log(sum) + max - z[label]);
      correct += argmax == label ? 1 : 0;
      if (dlogits != nullptr) {
        float* dz = dlogits + static_cast<size_t>(r) * classes;
        const float inverse_sum = 1.0f / sum;
        for (int c = 0; c < classes; ++c)
          dz[c] = std::exp(z[c] - max) * inverse_sum * scale;
        dz[label] -= scale;
      }
    }
    stats[0] += static_cast<float>(loss_sum);
    stats[1] += static_cast<float>(correct);
  }

  void adam_update(float* weights, const float* gradient, float* m, float* v,
                   size_t count, const adam_coefficients& c) override {
    if (c.skip_if != nullptr && *c.skip_if != 0.0f)
      return;
    adam_kernel(weights, gradient, m, v, count, c);
  }

  // Two terms are summed inside the step's loop; with more, all but the last
  // are summed a block at a time and the last joins the loop (1 x the
  // partial sum is that sum, so the bits are the same); one is summed first.
  void adam_update_sum(float* weights, const std::vector<weighted_gradient>& terms, float* m,
                       float* v, size_t count, const adam_coefficients& c) override {
    if (c.skip_if != nullptr && *c.skip_if != 0.0f)
      return;
    if (terms.size() < 2) {
      std::vector<float> gradient(count);
      weighted_gradient_sum(terms, 0, count, gradient.data());
      adam_kernel(weights, gradient.data(), m, v, count, c);
      return;
    }
    const weighted_gradient& last = terms.back();
    if (terms.size() == 2) {
      adam_sum2_kernel(weights, terms[0].gradient, terms[0].weight, last.gradient, last.weight,
                       m, v, count, c);
      return;
    }
    const std::vector<weighted_gradient> head(terms.begin(), terms.end() - 1);
    constexpr size_t block = 2048; // 8 KB: stays in L1 until the step reads it
    float partial[block];
    for (size_t offset = 0; offset < count; offset += block) {
      const size_t n = std::min(block, count - offset);
      weighted_gradient_sum(head, offset, n, partial);
      adam_sum2_kernel(weights + offset, partial, 1.0f, last.gradient + offset, last.weight,
                       m + offset, v + offset, n, c);
    }
  }

  resident_loop_ops* resident_ops() override { return this; }

  void gather_rows(const float* inputs, const int32_t* labels, int features,
                   const uint32_t* order, const step_counters* counters, int rows,
                   float* inputs_out, int32_t* labels_out) override {
    const uint32_t* indices = order + counters->cursor;
    const size_t row_floats = static_cast<size_t>(features);
    for (int r = 0; r < rows; ++r) {
      std::memcpy(inputs_out + r * row_floats, inputs + indices[r] * row_floats,
                  row_floats * sizeof(float));
      labels_out[r] = labels[indices[r]];
    }
  }

  void advance_step(step_counters* counters, int rows) override {
    counters->cursor += rows;
    counters->steps += 1;
  }

  void adam_update_counted(float* weights, const float* gradient, float* m, float* v,
                           size_t count, const adam_hyperparameters& h,
                           const step_counters* counters) override {
    adam_kernel(weights, gradient, m, v, count,
                adam_step_coefficients(h, static_cast<uint64_t>(counters->steps)));
  }
};

} // namespace

std::unique_ptr<backend> make_eigen_backend() {
  return std::make_unique<eigen_backend>();
}

} // namespace troupe::detail
