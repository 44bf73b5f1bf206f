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
  std::string request;  // "PATCH /api/v1/nodes/n1"
  int http_status = 0;  // 0: no HTTP answer (connection, TLS, timeout, deadline, client setup)
  std::string reason;   // a Status's reason ("Conflict"), the HTTP reason for a plain-text body
                        // ("TooManyRequests"), or the failure ("TLSVerification", "Timeout", ...)
  std::string message;  // a Status's message, a plain-text body's first line, or what failed

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

// Whether an answer with this status may be different next time: 429 and the 5xx of a server that
// is overloaded or recovering (500, 502, 503, 504). A 501 and every other 4xx will not.
bool transient_status(int http_status);

// The canonical reason for an HTTP status as the API server spells it ("NotFound", "Conflict").
std::string_view http_reason(int http_status);

// A value or an ApiError; it converts to Result<T> (and ApiStatus to Status) through
// ApiError::to_error (base/result.h).
template <typename T>
using ApiResult = Result<T, ApiError>;

using ApiStatus = ApiResult<Ok>;

}  // namespace iogate
