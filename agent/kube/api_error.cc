#include "kube/api_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace iogate {

std::string ApiError::summary() const {
  std::string out = request.empty() ? std::string() : request + ": ";
  if (http_status != 0) out += fmt::format("{} ", http_status);
  out += reason.empty() ? std::string(http_reason(http_status)) : reason;
  if (!message.empty()) out += ": " + message;
  return out;
}

std::string_view http_reason(int http_status) {
  // The reasons of metav1.StatusReason for the codes the API server returns.
  switch (http_status) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return http_status >= 500 ? "ServerError" : "Failure";
  }
}

ApiError api_error_from_response(std::string request, int http_status, std::string_view body) {
  ApiError e;
  e.request = std::move(request);
  e.http_status = http_status;
  auto status = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (status.is_object() && status.value("kind", "") == "Status") {
    if (auto r = status.find("reason"); r != status.end() && r->is_string()) e.reason = r->get<std::string>();
    if (auto m = status.find("message"); m != status.end() && m->is_string()) e.message = m->get<std::string>();
  } else {
    // Plain text: its first non-empty line, bounded so a proxy's HTML page cannot flood the log.
    size_t begin = body.find_first_not_of(" \t\r\n");
    if (begin != std::string_view::npos) {
      std::string_view line = body.substr(begin);
      line = line.substr(0, line.find_first_of("\r\n"));
      if (line.size() > 200) line = line.substr(0, 200);
      e.message = std::string(line);
    }
  }
  if (e.reason.empty()) e.reason = std::string(http_reason(http_status));
  return e;
}

bool transient_status(int http_status) {
  return http_status == 429 || http_status == 500 || http_status == 502 || http_status == 503 || http_status == 504;
}

}  // namespace iogate
