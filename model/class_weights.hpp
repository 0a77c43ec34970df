// Keras's class_weight: a weight per class, turned into a weight per sample
// (the weight of its label) that scales the sample's training loss.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Parses "CLASS:WEIGHT,CLASS:WEIGHT,..." (--class-weights) into one weight
/// per class from 0 to the largest class named; the classes not named weigh
/// 1. The empty text gives no weights. A class named twice, a class that is
/// not a whole number, a weight that is not a number, negative or not
/// finite is invalid_argument, with a sentence that names the entry.
expected<std::vector<float>> parse_class_weights(const std::string& text);

/// Writes weights as parse_class_weights reads them, naming only the classes
/// whose weight is not 1: "1:5.5,3:0". All 1 (or none) gives "".
std::string class_weights_text(const std::vector<float>& weights);

/// Says why `weights` cannot weigh the classes 0..classes-1 of a set (a
/// class out of range, all weights zero, a regression set with classes 0),
/// or returns "" when they can. `option` names the option in the sentence.
std::string refuse_class_weights(const std::vector<float>& weights, int classes,
                                 const std::string& option = "--class-weights");

/// Returns `weights` with one entry per class 0..classes-1: the classes
/// past its end weigh 1. Empty stays empty (no weights).
std::vector<float> class_weights_for(std::vector<float> weights, int classes);

/// Writes each sample's weight, the weight of its label: out: (count).
void sample_weights(const std::vector<float>& class_weights, const int32_t* labels,
                    size_t count, float* out);

} // namespace troupe::detail
