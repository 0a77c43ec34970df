// How far the GPU's Adam may drift from the CPU's, element by element: a
// rounding-error bound carried along the steps of the CPU reference. Plain
// C++, no CUDA, so that it can be checked against an emulation on any CPU.
#pragma once

#include <cstddef>
#include <vector>

#include "model/backend/backend.hpp"

namespace troupe::cuda_test {

/// Bounds |gpu - cpu| for Adam's m, v and weights, element by element, when
/// either side may fuse one product of each moment update into an FMA (nvcc
/// does by default; the CPU build passes -ffp-contract=off). The derivation
/// is in adam_drift_bound.cpp.
class adam_drift_bound {
public:
  /// Starts from weights and moments that both sides hold bit for bit.
  explicit adam_drift_bound(size_t count);

  /// Adds one step. `w`, `m` and `v` are the CPU's values before the step,
  /// `g` the gradient both sides were given; call it before the CPU steps.
  void step(const std::vector<float>& w, const std::vector<float>& g,
            const std::vector<float>& m, const std::vector<float>& v,
            const adam_coefficients& c);

  /// Returns the bound on |gpu_m - cpu_m|, one per element.
  const std::vector<double>& m() const { return m_; }
  /// Returns the bound on |gpu_v - cpu_v|, one per element.
  const std::vector<double>& v() const { return v_; }
  /// Returns the bound on |gpu_w - cpu_w|, one per element.
  const std::vector<double>& w() const { return w_; }

private:
  std::vector<double> m_;
  std::vector<double> v_;
  std::vector<double> w_;
};

} // namespace troupe::cuda_test
