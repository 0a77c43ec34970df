// Error values of Troupe's public API and its numerics layer: a small
// expected<T> and its valueless twin status, with no CAF in them (the actors
// layer turns them into caf::error at its edge, with to_caf_error).
#pragma once

#include <troupe/export.hpp>

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace troupe {

/// Says which kind of recoverable failure a model/ call met.
enum class model_errc {
  io_error = 1,     // a file is missing or cannot be read
  bad_format,       // a file's content is not what its format promises
  invalid_argument, // a caller passed a value that makes no sense
  device_error,     // a compute device is missing or failed
  run_failed,       // a training run stopped: a lost node or store, a timeout
  stopped,          // a training run stopped gracefully, as its caller asked
};

/// Holds a failure: its kind and a sentence for a person.
struct TROUPE_API model_error {
  model_errc code;
  std::string message;
};

/// Holds either a value or the model_error that prevented it.
template <class T>
class TROUPE_API expected {
public:
  expected(T value) : content_(std::move(value)) {}
  expected(model_error err) : content_(std::move(err)) {}

  explicit operator bool() const noexcept { return content_.index() == 0; }
  T& operator*() & { return std::get<0>(content_); }
  const T& operator*() const& { return std::get<0>(content_); }
  T&& operator*() && { return std::get<0>(std::move(content_)); }
  T* operator->() { return &std::get<0>(content_); }
  const T* operator->() const { return &std::get<0>(content_); }
  const model_error& error() const { return std::get<1>(content_); }

private:
  std::variant<T, model_error> content_;
};

/// Holds success, or the model_error that prevented it: expected<T> for a
/// call that has no value to return. `return {};` succeeds.
class TROUPE_API status {
public:
  status() = default;
  status(model_error err) : error_(std::move(err)) {}

  explicit operator bool() const noexcept { return !error_; }
  const model_error& error() const { return *error_; }

private:
  std::optional<model_error> error_;
};

/// Builds a model_error in one expression: `return fail(model_errc::io_error, "...")`.
inline model_error fail(model_errc code, std::string message) {
  return model_error{code, std::move(message)};
}

} // namespace troupe
