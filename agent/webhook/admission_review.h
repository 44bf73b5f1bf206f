// The AdmissionReview envelope (admission.k8s.io/v1): reading a request out of untrusted bytes
// without throwing, and writing the answer the API server expects.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/quote.h"  // log_safe, for the reviews' untrusted text
#include "webhook/admission.h"

namespace iogate {

struct AdmissionRequest {
  std::string uid;
  std::string operation;  // CREATE, UPDATE, DELETE, CONNECT
  bool dry_run = false;
  bool about_pods = false;            // resource pods in group "", no subresource
  std::string resource;               // "pods", "pods/binding", "apps/deployments": for the log
  std::string namespace_name, name;   // request.namespace, request.name ("" for generateName)
  nlohmann::json object, old_object;  // null when absent
};

// A request, or why there is none. http_status 400 or 413 (with `error` as the text): the body
// is no JSON object, no review can be answered. http_status 200 with `error`: a review that
// lacks what a decision needs, to answer with allowed false and status.code 400 (`uid` is
// echoed when the body has one).
struct ReviewParse {
  int http_status = 200;
  std::string error;
  std::string uid;
  AdmissionRequest request;
};
ReviewParse parse_admission_review(std::string_view body);

// Whether `text` nests arrays and objects at most `max_depth` deep. A linear scan that skips
// strings, meant to run before a parser builds a tree others walk recursively.
bool json_depth_within(std::string_view text, int max_depth);

struct AdmissionResponse {
  bool allowed = true;
  int code = 0;                       // status.code when refused: 400 a bad request, 403 the policy
  std::string message;                // status.message when refused
  nlohmann::json patch;               // an array of JSON patch operations; null or empty: no patch
  std::vector<std::string> warnings;  // each cut to 250 bytes, control characters escaped
};

// {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid",...}}; the
// patch base64-encoded with patchType JSONPatch.
std::string admission_review_json(const std::string& uid, const AdmissionResponse& response);

// The outcomes a handler returns.
AdmissionOutcome review_outcome(const std::string& uid, const AdmissionResponse& response, std::string log_line);
AdmissionOutcome plain_outcome(int http_status, std::string text, std::string log_line);

// "ns/name", "ns/generateName*" for a pod the API server has not named yet, or "ns/(no name)".
std::string pod_display_name(const AdmissionRequest& r);

}  // namespace iogate
