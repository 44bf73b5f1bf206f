#include "webhook/admission_review.h"

#include <fmt/format.h>

#include "base/base64.h"
#include "base/json_fields.h"
#include "kube/api_error.h"

namespace iogate {
namespace {

constexpr const char* kReviewApiVersion = "admission.k8s.io/v1";
constexpr size_t kMaxWarningBytes = 250;

// A field the review must have as a string; "" with `error` set when it is there but mistyped.
std::string optional_string(const nlohmann::json& object, const char* key, const char* where, std::string& error) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  if (!it->is_string()) {
    if (error.empty()) error = fmt::format("{}.{} is a {}, not a string", where, key, it->type_name());
    return "";
  }
  return it->get<std::string>();
}

}  // namespace

bool json_depth_within(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

ReviewParse parse_admission_review(std::string_view body) {
  ReviewParse out;
  auto refuse = [&](int status, std::string why) {
    out.http_status = status;
    out.error = std::move(why);
    return out;
  };
  if (body.size() > kMaxAdmissionBody) {
    return refuse(413, fmt::format("request body of {} bytes is larger than the {} bytes an AdmissionReview may have",
                                   body.size(), kMaxAdmissionBody));
  }
  if (body.empty()) return refuse(400, "empty request body: expected an AdmissionReview");
  if (!json_depth_within(body, kMaxAdmissionJsonDepth)) {
    return refuse(400,
                  fmt::format("JSON nested deeper than {} levels: not an AdmissionReview", kMaxAdmissionJsonDepth));
  }
  nlohmann::json review;
  try {
    review = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    return refuse(400, "request body is not JSON: " + log_safe(e.what()));
  }
  if (!review.is_object())
    return refuse(400, fmt::format("request body is a JSON {}, not an AdmissionReview object", review.type_name()));

  // From here on the body is answered with an AdmissionReview; `uid` is echoed as far as known.
  const nlohmann::json& request = object_at(review, "request");
  out.uid = string_at(request, "uid");
  auto bad = [&](std::string why) {
    out.error = std::move(why);
    return out;
  };
  std::string api_version = string_at(review, "apiVersion"), kind = string_at(review, "kind");
  if (api_version != kReviewApiVersion) {
    return bad(fmt::format("apiVersion is \"{}\", expected \"{}\" (list only v1 in admissionReviewVersions)",
                           log_safe(api_version, 60), kReviewApiVersion));
  }
  if (kind != "AdmissionReview")
    return bad(fmt::format("kind is \"{}\", expected \"AdmissionReview\"", log_safe(kind, 60)));
  auto req = review.find("request");
  if (req == review.end() || !req->is_object()) return bad("the review has no request object");
  if (out.uid.empty()) return bad("request.uid is missing or not a non-empty string");

  AdmissionRequest& r = out.request;
  r.uid = out.uid;
  std::string error;
  r.operation = optional_string(*req, "operation", "request", error);
  r.namespace_name = optional_string(*req, "namespace", "request", error);
  r.name = optional_string(*req, "name", "request", error);
  std::string sub_resource = optional_string(*req, "subResource", "request", error);
  if (!error.empty()) return bad(error);
  if (r.operation.empty()) return bad("request.operation is missing");

  auto resource = req->find("resource");
  if (resource == req->end() || !resource->is_object()) return bad("request.resource is missing or not an object");
  std::string group = optional_string(*resource, "group", "request.resource", error);
  std::string plural = optional_string(*resource, "resource", "request.resource", error);
  if (!error.empty()) return bad(error);
  if (plural.empty()) return bad("request.resource.resource is missing");
  r.resource = (group.empty() ? "" : group + "/") + plural + (sub_resource.empty() ? "" : "/" + sub_resource);
  r.about_pods = group.empty() && plural == "pods" && sub_resource.empty();

  if (auto dry = req->find("dryRun"); dry != req->end() && !dry->is_null()) {
    if (!dry->is_boolean()) return bad(fmt::format("request.dryRun is a {}, not a boolean", dry->type_name()));
    r.dry_run = dry->get<bool>();
  }
  if (auto o = req->find("object"); o != req->end()) r.object = std::move(*o);
  if (auto o = req->find("oldObject"); o != req->end()) r.old_object = std::move(*o);
  return out;
}

std::string admission_review_json(const std::string& uid, const AdmissionResponse& response) {
  nlohmann::json r = {{"uid", uid}, {"allowed", response.allowed}};
  // A refusal carries the metav1.Status reason, as the API server's own admission plugins give it:
  // the API server passes the webhook's status through, and clients classify a failure by its
  // reason (kubectl prints "Error from server (Forbidden)").
  if (!response.allowed) {
    r["status"] = {{"status", "Failure"},
                   {"code", response.code},
                   {"reason", std::string(http_reason(response.code))},
                   {"message", response.message}};
  }
  if (response.patch.is_array() && !response.patch.empty()) {
    r["patchType"] = "JSONPatch";
    r["patch"] = encode_base64(response.patch.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  // Warnings travel as HTTP Warning headers: no control characters, and the API server may cut
  // them after 256 characters, so they are cut here on a character boundary instead.
  for (const std::string& w : response.warnings) r["warnings"].push_back(log_safe(w, kMaxWarningBytes));
  nlohmann::json review = {{"apiVersion", kReviewApiVersion}, {"kind", "AdmissionReview"}, {"response", std::move(r)}};
  return review.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string_view admission_decision_name(AdmissionDecision d) {
  switch (d) {
    case AdmissionDecision::kAllowed: return "allowed";
    case AdmissionDecision::kMutated: return "mutated";
    case AdmissionDecision::kDenied: return "denied";
    case AdmissionDecision::kError: return "error";
  }
  return "error";
}

std::string_view admission_error_name(AdmissionError e) {
  switch (e) {
    case AdmissionError::kNone: return "";
    case AdmissionError::kBadRequest: return "bad_request";
    case AdmissionError::kTooLarge: return "too_large";
    case AdmissionError::kInternal: return "internal";
    case AdmissionError::kNodeLookup: return "node_lookup";
  }
  return "internal";
}

AdmissionOutcome review_outcome(const std::string& uid, const AdmissionResponse& response, std::string log_line) {
  AdmissionOutcome o;
  o.body = admission_review_json(uid, response);
  o.log_line = log_safe(log_line, 2000);
  bool patched = response.patch.is_array() && !response.patch.empty();
  o.decision = !response.allowed ? AdmissionDecision::kDenied
               : patched         ? AdmissionDecision::kMutated
                                 : AdmissionDecision::kAllowed;
  return o;
}

AdmissionOutcome plain_outcome(int http_status, std::string text, std::string log_line) {
  AdmissionOutcome o;
  o.decision = AdmissionDecision::kError;
  o.error = http_status == 400   ? AdmissionError::kBadRequest
            : http_status == 413 ? AdmissionError::kTooLarge
                                 : AdmissionError::kInternal;
  o.http_status = http_status;
  o.content_type = "text/plain; charset=utf-8";
  o.body = log_safe(text, 1000) + "\n";
  o.log_line = log_safe(log_line, 2000);
  return o;
}

std::string pod_display_name(const AdmissionRequest& r) {
  const nlohmann::json& meta = object_at(r.object, "metadata");
  std::string ns = r.namespace_name.empty() ? string_at(meta, "namespace") : r.namespace_name;
  std::string name = r.name.empty() ? string_at(meta, "name") : r.name;
  if (name.empty()) {
    std::string generate = string_at(meta, "generateName");
    name = generate.empty() ? "(no name)" : generate + "*";
  }
  return (ns.empty() ? "" : ns + "/") + name;
}

}  // namespace iogate
