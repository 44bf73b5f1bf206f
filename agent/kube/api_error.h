// Errors from the Kubernetes API as values callers can branch on (404 NotFound, 409 Conflict, 403
// Forbidden) and still turn into the project's one-line Error with a plain conversion.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "base/result.h"

namespace iogate {

struct ApiError {
  std::string request;   // "PATCH /api/v1/nodes/n1"
  int http_status = 0;   // 0: no HTTP answer (connection, TLS, timeout, deadline, client setup)
  std::string reason;    // a Status's reason ("Conflict"), the HTTP reason for a plain-text body
                         // ("TooManyRequests"), or the failure ("TLSVerification", "Timeout", ...)
  std::string message;   // a Status's message, a plain-text body's first line, or what failed

  // "PATCH /api/v1/nodes/n1: 409 Conflict: Operation cannot be fulfilled on nodes \"n1\": ..."
  std::string summary() const;
  Error to_error() const { return runtime_error(summary()); }
  bool not_found() const { return http_status == 404; }
  bool conflict() const { return http_status == 409; }
  // A create's 409: the name is taken (a Conflict 409 is a stale resourceVersion instead).
  bool already_exists() const { return http_status == 409 && reason == "AlreadyExists"; }
};

// ApiError from an HTTP error answer: a `kind: Status` body gives reason and message; any other
// body (priority-and-fairness 429s are plain text) gives its first line and the code's reason.
ApiError api_error_from_response(std::string request, int http_status, std::string_view body);

// The canonical reason for an HTTP status as the API server spells it ("NotFound", "Conflict").
std::string_view http_reason(int http_status);

// A value or an ApiError. Converts to Result<T> (and ApiStatus to Status) for callers that only
// need "did it work", so an ApiError never has to be unpacked by hand on the way up.
template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : v_(std::move(value)) {}
  ApiResult(ApiError error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const ApiError& error() const { return std::get<1>(v_); }

  operator Result<T>() const& {
    if (ok()) return value();
    return error().to_error();
  }
  operator Result<T>() && {
    if (ok()) return std::move(std::get<0>(v_));
    return error().to_error();
  }

 private:
  std::variant<T, ApiError> v_;
};

using ApiStatus = ApiResult<Ok>;

}  // namespace iogate
