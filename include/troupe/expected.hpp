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

/// Says what kind of failure a call met, for a program to act on.
enum class errc {
  invalid_argument = 1, // a value or option that makes no sense (the program's to fix)
  bad_data,             // data or a file whose content is not what it should be
  io,                   // a file or folder that is missing or cannot be read or written
  device,               // a compute device that is missing or failed
  node_lost,            // a node, a store shard or a replica of the run was lost
  timeout,              // a bounded wait ran out
  stopped,              // the run stopped gracefully, as its caller asked
  run_failed,           // the run failed otherwise (a callback threw, ...)
  // The names before: deprecated, removed in the next release.
  io_error [[deprecated("use errc::io")]] = io,
  bad_format [[deprecated("use errc::bad_data")]] = bad_data,
  device_error [[deprecated("use errc::device")]] = device,
};

/// Holds a failure: its kind and a sentence for a person.
struct TROUPE_API error {
  errc code;
  std::string message;
};

/// The names before: deprecated, removed in the next release.
using model_errc [[deprecated("use troupe::errc")]] = errc;
using model_error [[deprecated("use troupe::error")]] = error;

/// Holds either a value or the error that prevented it.
template <class T>
class TROUPE_API expected {
public:
  expected(T value) : content_(std::move(value)) {}
  expected(troupe::error err) : content_(std::move(err)) {}

  explicit operator bool() const noexcept { return content_.index() == 0; }
  T& operator*() & { return std::get<0>(content_); }
  const T& operator*() const& { return std::get<0>(content_); }
  T&& operator*() && { return std::get<0>(std::move(content_)); }
  T* operator->() { return &std::get<0>(content_); }
  const T* operator->() const { return &std::get<0>(content_); }
  const troupe::error& error() const { return std::get<1>(content_); }

private:
  std::variant<T, troupe::error> content_;
};

/// Holds success, or the error that prevented it: expected<T> for a
/// call that has no value to return. `return {};` succeeds.
class TROUPE_API status {
public:
  status() = default;
  status(troupe::error err) : error_(std::move(err)) {}

  explicit operator bool() const noexcept { return !error_; }
  const troupe::error& error() const { return *error_; }

private:
  std::optional<troupe::error> error_;
};

/// Builds an error in one expression: `return fail(errc::io, "...")`.
inline error fail(errc code, std::string message) {
  return error{code, std::move(message)};
}

} // namespace troupe
