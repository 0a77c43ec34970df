// Test-only fault injection: a backend that forwards every op to a real one
// and throws at its N-th gradient, and the fit_options hook that installs it
// around one replica's backend (local replicas only; nothing of it is sent).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "actors/fit_options.hpp"
#include "model/backend/backend.hpp"

namespace troupe::testing {

/// Computes like `inner` and throws at gradient `fail_at` (1-based), so the
/// replica that owns it dies at that push, before sending it.
class failing_backend final : public backend {
public:
  failing_backend(std::unique_ptr<backend> inner, uint64_t fail_at)
    : inner_(std::move(inner)), fail_at_(fail_at) {}

  std::string name() const override { return inner_->name(); }
  bool host_memory() const override { return inner_->host_memory(); }
  void* allocate(size_t bytes) override { return inner_->allocate(bytes); }
  void release(void* ptr) noexcept override { inner_->release(ptr); }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    inner_->copy_to_device(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    inner_->copy_to_host(dst, src, bytes);
  }
  void fill_zero(void* dst, size_t bytes) override { inner_->fill_zero(dst, bytes); }
  void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
            const float* a, const float* b, float beta, float* c) override {
    inner_->gemm(transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
  }
  void bias_activation(float* y, const float* bias, int rows, int cols,
                       activation act) override {
    inner_->bias_activation(y, bias, rows, cols, act);
  }
  void activation_backward(float* dy, const float* y, size_t count,
                           activation act) override {
    inner_->activation_backward(dy, y, count, act);
  }
  void bias_gradient(const float* dy, int rows, int cols, float* db) override {
    inner_->bias_gradient(dy, rows, cols, db);
  }
  // Called once per gradient (with dlogits) and per evaluated batch (without).
  void softmax_cross_entropy(const float* logits, const int32_t* labels, int rows,
                             int classes, float scale, float* dlogits,
                             float* stats) override {
    if (dlogits != nullptr && ++gradients_ == fail_at_)
      throw std::runtime_error("injected fault at push " + std::to_string(gradients_));
    inner_->softmax_cross_entropy(logits, labels, rows, classes, scale, dlogits, stats);
  }
  void adam_update(float* weights, const float* gradient, float* m, float* v,
                   size_t count, const adam_coefficients& c) override {
    inner_->adam_update(weights, gradient, m, v, count, c);
  }

private:
  std::unique_ptr<backend> inner_;
  uint64_t fail_at_;
  uint64_t gradients_ = 0;
};

/// Makes replica `replica` of a fit die at its push `push` (1-based): it
/// throws while computing that gradient, as a crashing replica would.
inline void fail_replica_at_push(fit_options& options, uint32_t replica, uint64_t push) {
  options.wrap_replica_backend = [replica, push](uint32_t index,
                                                 std::unique_ptr<backend> compute) {
    if (index != replica)
      return compute;
    return std::unique_ptr<backend>(new failing_backend(std::move(compute), push));
  };
}

} // namespace troupe::testing
