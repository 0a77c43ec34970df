// The factorization machine's score, loss, gradient and registration.
#include "factorization_machine.hpp"

#include <cmath>
#include <sstream>

namespace {

// log(sigmoid(s)) and sigmoid(s), without overflow for large |s|.
double log_sigmoid(double s) {
  return s >= 0 ? -std::log1p(std::exp(-s)) : s - std::log1p(std::exp(s));
}

double sigmoid(double s) {
  return s >= 0 ? 1 / (1 + std::exp(-s)) : std::exp(s) / (1 + std::exp(s));
}

// A splitmix64 stream: the same initial bits in every process.
double unit_draw(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<double>((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

} // namespace

factorization_machine::factorization_machine(int inputs, int factors)
  : inputs_(inputs), factors_(factors), sums_(static_cast<size_t>(factors)) {}

size_t factorization_machine::parameter_count() const {
  return 1 + static_cast<size_t>(inputs_) * (1 + factors_);
}

void factorization_machine::initialize(uint64_t seed, float* parameters) const {
  uint64_t state = seed;
  for (size_t i = 0; i < parameter_count(); ++i)
    parameters[i] = i <= static_cast<size_t>(inputs_)
                      ? 0.0f
                      : static_cast<float>(0.2 * unit_draw(state) - 0.1);
}

double factorization_machine::score(const float* p, const float* x) {
  const float* w = p + 1;
  const float* v = w + inputs_;
  double s = p[0];
  for (int i = 0; i < inputs_; ++i)
    s += static_cast<double>(w[i]) * x[i];
  for (int f = 0; f < factors_; ++f) {
    double sum = 0, squares = 0;
    for (int i = 0; i < inputs_; ++i) {
      const double term = static_cast<double>(v[i * factors_ + f]) * x[i];
      sum += term;
      squares += term * term;
    }
    sums_[f] = sum;
    s += 0.5 * (sum * sum - squares); // sum over i < j of v_if v_jf x_i x_j
  }
  return s;
}

troupe::batch_result factorization_machine::gradient(const float* p, const troupe::batch& b,
                                                     float* gradient) {
  std::vector<double> g(parameter_count(), 0.0);
  troupe::batch_result result;
  const float* v = p + 1 + inputs_;
  for (size_t n = 0; n < b.count; ++n) {
    const float* x = b.row(n);
    const double s = score(p, x);
    const int label = b.labels[n];
    result.loss_sum -= label == 1 ? log_sigmoid(s) : log_sigmoid(-s);
    result.correct += (s > 0) == (label == 1);
    const double ds = (sigmoid(s) - label) / static_cast<double>(b.count); // of the mean loss
    g[0] += ds;
    for (int i = 0; i < inputs_; ++i) {
      g[1 + i] += ds * x[i];
      for (int f = 0; f < factors_; ++f)
        g[1 + inputs_ + i * factors_ + f] +=
          ds * x[i] * (sums_[f] - static_cast<double>(v[i * factors_ + f]) * x[i]);
    }
  }
  for (size_t i = 0; i < g.size(); ++i)
    gradient[i] = static_cast<float>(g[i]);
  return result;
}

troupe::batch_result factorization_machine::evaluate(const float* p, const troupe::batch& b) {
  troupe::batch_result result;
  for (size_t n = 0; n < b.count; ++n) {
    const double s = score(p, b.row(n));
    result.loss_sum -= b.labels[n] == 1 ? log_sigmoid(s) : log_sigmoid(-s);
    result.correct += (s > 0) == (b.labels[n] == 1);
  }
  return result;
}

void factorization_machine::predict(const float* p, const float* features, size_t count,
                                    float* outputs) {
  for (size_t n = 0; n < count; ++n) {
    const double one = sigmoid(score(p, features + n * static_cast<size_t>(inputs_)));
    outputs[2 * n] = static_cast<float>(1 - one);
    outputs[2 * n + 1] = static_cast<float>(one);
  }
}

void register_factorization_machine() {
  troupe::register_model("fm", [](const std::string& settings)
                                 -> troupe::expected<std::unique_ptr<troupe::model>> {
    int inputs = 0, factors = 0;
    std::stringstream fields(settings);
    for (std::string field; std::getline(fields, field, ',');) {
      const auto equals = field.find('=');
      const auto key = field.substr(0, equals);
      const int value = equals == std::string::npos ? 0 : std::atoi(field.c_str() + equals + 1);
      if (key == "inputs")
        inputs = value;
      else if (key == "factors")
        factors = value;
      else
        return troupe::fail(troupe::errc::invalid_argument,
                            "unknown setting '" + field + "' (inputs=N,factors=K)");
    }
    if (inputs < 1 || factors < 1)
      return troupe::fail(troupe::errc::invalid_argument,
                          "needs inputs=N,factors=K, each at least 1");
    return std::unique_ptr<troupe::model>(new factorization_machine(inputs, factors));
  });
}
