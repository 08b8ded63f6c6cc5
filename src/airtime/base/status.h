// Status and StatusOr: the error type of every fallible airtime call.
//
// A Status is either OK or carries a canonical code and a message that names what is
// wrong and where ("workloads.yaml:12: field 'gpus': expected a positive integer").
// StatusOr<T> holds a value or a non-OK Status. Both are [[nodiscard]] so that an error
// cannot be dropped silently. Plain value types: safe to copy between threads, not to share
// one instance mutably.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace airtime {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kOutOfRange,
  kUnavailable,
  kInternal,
  kPermissionDenied,
  kUnauthenticated,
  kResourceExhausted,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "StatusOr needs a non-OK status or a value");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace airtime

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define AIRTIME_RETURN_IF_ERROR(expr) \
  do {                                \
    ::airtime::Status _st = (expr);   \
    if (!_st.ok()) return _st;        \
  } while (0)
