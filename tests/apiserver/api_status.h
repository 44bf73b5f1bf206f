// Kubernetes `kind: Status` failure bodies, shaped as the real API server writes them, so that a
// client's error handling is tested against the same reason/message/details it meets in a cluster.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace iogate::apiserver {

// One field error inside an Invalid (422) Status: details.causes[].
struct FieldCause {
  std::string reason;   // FieldValueInvalid, FieldValueRequired, FieldValueTooLong, ...
  std::string message;  // "Invalid value: \"x\": ..." / "Required value"
  std::string field;    // "metadata.labels", "eventTime"
};

struct ApiError {
  int code = 500;
  std::string reason;  // NotFound, Conflict, Invalid, Unauthorized, ...
  std::string message;
  nlohmann::json details;  // null when the real server sends none
};

nlohmann::json status_body(const ApiError& error);

// Constructors for the errors the subset needs; messages follow k8s.io/apimachinery's errors.
// `resource` is the plural resource ("pods"), `group` empty for the core group.
ApiError not_found(const std::string& resource, const std::string& group, const std::string& name);
ApiError already_exists(const std::string& resource, const std::string& group, const std::string& name);
ApiError conflict(const std::string& resource, const std::string& group, const std::string& name,
                  const std::string& why);
// The conflict a stale metadata.resourceVersion earns.
ApiError stale_conflict(const std::string& resource, const std::string& group, const std::string& name);
ApiError invalid(const std::string& kind, const std::string& group, const std::string& name,
                 const std::vector<FieldCause>& causes);
ApiError bad_request(const std::string& message);
ApiError unauthorized();
ApiError unsupported_media_type();
ApiError method_not_allowed(const std::string& message);
ApiError internal_error(const std::string& message);

// The cause constructors, with field.ErrorList's message wording.
FieldCause invalid_value(const std::string& field, const std::string& value, const std::string& detail);
FieldCause required_value(const std::string& field, const std::string& detail = "");
FieldCause too_long(const std::string& field, size_t max_bytes);

}  // namespace iogate::apiserver
