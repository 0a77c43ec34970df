// A factorization machine classifier (Rendle, 2010), written against
// troupe::model with plain loops: Troupe ships no such layer.
//
//   s(x) = w0 + sum_i w_i x_i + sum_{i<j} <v_i, v_j> x_i x_j
//   logits (0, s): p(class 1) = sigmoid(s), softmax cross-entropy loss
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <troupe/model.hpp>

/// Scores two classes with a factorization machine of `factors` factors per
/// feature. Parameters: w0, then w (inputs), then v (inputs, factors).
class factorization_machine : public troupe::model {
public:
  factorization_machine(int inputs, int factors);

  int inputs() const override { return inputs_; }
  int outputs() const override { return 2; }
  size_t parameter_count() const override;
  void initialize(uint64_t seed, float* parameters) const override;
  troupe::batch_result gradient(const float* parameters, const troupe::batch& samples,
                                float* gradient) override;
  troupe::batch_result evaluate(const float* parameters, const troupe::batch& samples) override;
  void predict(const float* parameters, const float* features, size_t count,
               float* outputs) override;

private:
  // s(x) for one sample; fills sums_ (sum_j v_jf x_j per factor).
  double score(const float* parameters, const float* x);

  int inputs_;
  int factors_;
  std::vector<double> sums_; // (factors)
};

/// Registers the model as "fm", with settings "inputs=N,factors=K".
void register_factorization_machine();
