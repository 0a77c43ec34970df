// Test-only: a backend that forwards every op to another one. Test backends
// (fault injection, a simulated device) derive from it and override the ops
// they change.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/backend/backend.hpp"

namespace troupe::testing {

/// Computes exactly like `inner`.
class forwarding_backend : public backend {
public:
  explicit forwarding_backend(std::unique_ptr<backend> inner) : inner_(std::move(inner)) {}

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
  void queue_copy_to_host(void* dst, const void* src, size_t bytes) override {
    inner_->queue_copy_to_host(dst, src, bytes);
  }
  void* allocate_host(size_t bytes) override { return inner_->allocate_host(bytes); }
  void release_host(void* ptr) noexcept override { inner_->release_host(ptr); }
  void finish() override { inner_->finish(); }
  std::shared_ptr<const device_event> record_event() override { return inner_->record_event(); }
  void wait_for(const device_event& event) override { inner_->wait_for(event); }
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
  void softmax_cross_entropy(const float* logits, const int32_t* labels, int rows,
                             int classes, float scale, float* dlogits,
                             float* stats) override {
    inner_->softmax_cross_entropy(logits, labels, rows, classes, scale, dlogits, stats);
  }
  void adam_update(float* weights, const float* gradient, float* m, float* v,
                   size_t count, const adam_coefficients& c) override {
    inner_->adam_update(weights, gradient, m, v, count, c);
  }
  void weighted_sum(const std::vector<weighted_gradient>& terms, size_t count,
                    float* out) override {
    inner_->weighted_sum(terms, count, out);
  }
  void adam_update_sum(float* weights, const std::vector<weighted_gradient>& terms, float* m,
                       float* v, size_t count, const adam_coefficients& c) override {
    inner_->adam_update_sum(weights, terms, m, v, count, c);
  }
  bool has_non_finite(const float* values, size_t count) override {
    return inner_->has_non_finite(values, count);
  }
  resident_loop_ops* resident_ops() override { return inner_->resident_ops(); }
  void flag_non_finite(const float* values, size_t count, float* flag) override {
    inner_->flag_non_finite(values, count, flag);
  }

private:
  std::unique_ptr<backend> inner_;
};

} // namespace troupe::testing
