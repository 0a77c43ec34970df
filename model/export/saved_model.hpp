// The saved-model file: a trained model that describes itself (what it is,
// its input and output widths, its loss, its parameters), versioned and
// checksummed, for serving or for reading back into Troupe.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Holds a trained model as the saved-model file stores it.
struct saved_model {
  // Describes the model: a model_spec text ("784-128relu-10") or, for a user
  // model registered by name, "name" or "name:settings". Stored as given.
  std::string model;
  int inputs = 0;           // features per sample
  int outputs = 0;          // logits per sample
  std::string loss;         // e.g. "sparse_categorical_crossentropy"
  std::vector<float> parameters; // the flat parameter buffer
};

/// Names the loss Troupe's built-in models train with (softmax cross-entropy
/// on integer labels), as Keras names it.
inline constexpr const char* sparse_categorical_crossentropy = "sparse_categorical_crossentropy";

/// Writes `m` to `path` atomically (temporary file, sync, rename). A model
/// without a description or with inputs or outputs below 1, or whose
/// model_spec text disagrees with its widths or parameter count, is
/// invalid_argument; a failed write is io_error. Both name the path.
status save_model(const std::string& path, const saved_model& m);

/// Reads and validates the saved model at `path`. A missing or unreadable
/// file is io_error; a file that is not a saved model, of a newer format
/// version, truncated, with trailing bytes, failing its checksum, or whose
/// header disagrees with its model_spec text is bad_format. Each error names
/// the path and what is wrong.
expected<saved_model> load_saved_model(const std::string& path);

} // namespace troupe::detail
