// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace inferscope::base {

// Why an operation failed. The code is coarse on purpose: callers branch on it (the CLI maps it to
// an exit code, a future HTTP layer to a status), while the message carries the detail for humans.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,  // the caller asked for something malformed (bad flag, bad rule file)
  kNotFound,         // a file or object that does not exist
  kUnsupported,      // well-formed input of a kind we do not handle (e.g. not a trace)
  kDataLoss,         // input that is truncated or corrupt (bad gzip, malformed JSON)
  kUnavailable,      // a dependency is not there right now (no driver, no agent)
  kAlreadyExists,    // what the caller wants to own is someone else's (another agent's state dir)
  kInternal,         // a bug of ours
};

// A success or an error with a message. No exceptions cross module boundaries: every fallible
// function returns Status or StatusOr<T>.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return {}; }
inline Status InvalidArgumentError(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status UnsupportedError(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status AlreadyExistsError(std::string m) {
  return {StatusCode::kAlreadyExists, std::move(m)};
}
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : data_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : data_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(data_).ok())
      data_ = Status(StatusCode::kInternal, "StatusOr built from OK");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  Status status() const { return ok() ? OkStatus() : std::get<Status>(data_); }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace inferscope::base

#define INFERSCOPE_CONCAT_INNER(a, b) a##b
#define INFERSCOPE_CONCAT(a, b) INFERSCOPE_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                              \
  do {                                                     \
    ::inferscope::base::Status status_macro_tmp_ = (expr); \
    if (!status_macro_tmp_.ok()) return status_macro_tmp_; \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(INFERSCOPE_CONCAT(status_or_tmp_, __LINE__), lhs, expr)
