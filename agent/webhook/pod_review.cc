#include "webhook/pod_review.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/json_fields.h"

namespace iogate {

std::optional<std::string> pod_annotation(const AdmissionRequest& r, const char* key) {
  const nlohmann::json& annotations = object_at(object_at(r.object, "metadata"), "annotations");
  auto it = annotations.find(key);
  if (it == annotations.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

namespace {

// A review the API server should never send: answered allowed false, counted as an error.
AdmissionOutcome bad_review(const PodReview& review, const std::string& message) {
  AdmissionOutcome o = refusal(review, 400, "bad AdmissionReview: " + message);
  o.decision = AdmissionDecision::kError;
  o.error = AdmissionError::kBadRequest;
  return o;
}

}  // namespace

AdmissionOutcome refusal(const PodReview& review, int code, const std::string& message) {
  AdmissionResponse response;
  response.allowed = false;
  response.code = code;
  response.message = message;
  response.warnings = review.warnings;
  return review_outcome(review.request.uid, response,
                        fmt::format("{}: refused ({}): {}", review.subject, code, message));
}

PodReview review_pod(std::string_view endpoint, std::string_view body, const WebhookConfig& config,
                     std::initializer_list<std::string_view> operations) {
  PodReview out;
  out.subject = std::string(endpoint);
  if (config.policy == nullptr) {
    out.answer = plain_outcome(500, "the webhook has no policy", out.subject + ": no policy configured");
    return out;
  }
  ReviewParse parse = parse_admission_review(body);
  if (parse.http_status != 200) {
    out.answer = plain_outcome(parse.http_status, parse.error,
                               fmt::format("{}: HTTP {} for a body of {} bytes: {}", out.subject, parse.http_status,
                                           body.size(), parse.error));
    return out;
  }
  out.request = std::move(parse.request);
  out.request.uid = parse.uid;
  AdmissionRequest& r = out.request;
  out.pod = pod_display_name(r);
  out.subject = fmt::format("{} {} {} {} uid={}{}", endpoint, r.operation.empty() ? "?" : r.operation,
                            r.resource.empty() ? "?" : r.resource, r.about_pods ? out.pod : std::string("-"),
                            r.uid.empty() ? "-" : r.uid, r.dry_run ? " dry-run" : "");
  if (!parse.error.empty()) {
    out.answer = bad_review(out, parse.error);
    return out;
  }
  bool acted_on = r.about_pods && std::find(operations.begin(), operations.end(), r.operation) != operations.end();
  if (!acted_on) {
    out.answer = review_outcome(r.uid, AdmissionResponse{}, out.subject + ": allowed, not acted on");
    return out;
  }
  if (!r.object.is_object()) {
    out.answer = bad_review(out, "request.object is missing or not an object");
    return out;
  }
  if (auto kind = r.object.find("kind"); kind != r.object.end() && *kind != "Pod") {
    out.answer = bad_review(out, fmt::format("request.object is a {}, not a Pod",
                                             kind->is_string() ? kind->get<std::string>() : kind->type_name()));
    return out;
  }
  if (pod_annotation(r, kSkipAnnotation) == "true") {
    if (config.allow_opt_out) {
      out.answer = review_outcome(r.uid, AdmissionResponse{},
                                  fmt::format("{}: allowed, opted out ({}: \"true\")", out.subject, kSkipAnnotation));
      return out;
    }
    out.warnings.push_back(
        fmt::format("iogate: annotation {} is ignored: this webhook does not allow opting out", kSkipAnnotation));
  }
  return out;
}

}  // namespace iogate
