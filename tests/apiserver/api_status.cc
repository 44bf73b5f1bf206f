#include "api_status.h"

namespace iogate::apiserver {

using nlohmann::json;

json status_body(const ApiError& e) {
  json body = {{"kind", "Status"},    {"apiVersion", "v1"},   {"metadata", json::object()},
               {"status", "Failure"}, {"message", e.message}, {"reason", e.reason}};
  if (!e.details.is_null()) body["details"] = e.details;
  body["code"] = e.code;
  return body;
}

static json name_details(const std::string& resource, const std::string& group, const std::string& name) {
  json d = {{"name", name}};
  if (!group.empty()) d["group"] = group;
  d["kind"] = resource;
  return d;
}

static std::string qualified(const std::string& resource, const std::string& group) {
  return group.empty() ? resource : resource + "." + group;
}

ApiError not_found(const std::string& resource, const std::string& group, const std::string& name) {
  return {404, "NotFound", qualified(resource, group) + " \"" + name + "\" not found",
          name_details(resource, group, name)};
}

ApiError already_exists(const std::string& resource, const std::string& group, const std::string& name) {
  return {409, "AlreadyExists", qualified(resource, group) + " \"" + name + "\" already exists",
          name_details(resource, group, name)};
}

ApiError conflict(const std::string& resource, const std::string& group, const std::string& name,
                  const std::string& why) {
  return {409, "Conflict",
          "Operation cannot be fulfilled on " + qualified(resource, group) + " \"" + name + "\": " + why,
          name_details(resource, group, name)};
}

ApiError stale_conflict(const std::string& resource, const std::string& group, const std::string& name) {
  return conflict(resource, group, name,
                  "the object has been modified; please apply your changes to the latest version and try again");
}

ApiError invalid(const std::string& kind, const std::string& group, const std::string& name,
                 const std::vector<FieldCause>& causes) {
  // "Node \"n1\" is invalid: metadata.labels: Invalid value: ...", causes joined by ", " in brackets
  // when there are several, as field.ErrorList.ToAggregate() prints them.
  std::string joined;
  json jcauses = json::array();
  for (const auto& c : causes) {
    std::string one = c.field.empty() ? c.message : c.field + ": " + c.message;
    joined += (joined.empty() ? "" : ", ") + one;
    jcauses.push_back({{"reason", c.reason}, {"message", c.message}, {"field", c.field}});
  }
  if (causes.size() > 1) joined = "[" + joined + "]";
  json d = {{"name", name}};
  if (!group.empty()) d["group"] = group;
  d["kind"] = kind;
  d["causes"] = jcauses;
  return {422, "Invalid", kind + " \"" + name + "\" is invalid: " + joined, d};
}

ApiError bad_request(const std::string& message) { return {400, "BadRequest", message, nullptr}; }

ApiError unauthorized() { return {401, "Unauthorized", "Unauthorized", nullptr}; }

ApiError unsupported_media_type() {
  return {415, "UnsupportedMediaType",
          "the body of the request was in an unknown format - accepted media types include: "
          "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "
          "application/strategic-merge-patch+json",
          nullptr};
}

ApiError method_not_allowed(const std::string& message) { return {405, "MethodNotAllowed", message, nullptr}; }

ApiError internal_error(const std::string& message) {
  return {500, "InternalError", "Internal error occurred: " + message,
          json{{"causes", json::array({{{"message", message}}})}}};
}

FieldCause invalid_value(const std::string& field, const std::string& value, const std::string& detail) {
  return {"FieldValueInvalid", "Invalid value: " + json(value).dump() + ": " + detail, field};
}

FieldCause required_value(const std::string& field, const std::string& detail) {
  return {"FieldValueRequired", detail.empty() ? "Required value" : "Required value: " + detail, field};
}

FieldCause too_long(const std::string& field, size_t max_bytes) {
  return {"FieldValueTooLong", "Too long: must have at most " + std::to_string(max_bytes) + " bytes", field};
}

}  // namespace iogate::apiserver
