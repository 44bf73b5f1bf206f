// The steps both endpoints take before judging a pod: read the review, keep to the operations the
// endpoint acts on, check that the object is a pod, and honour (or refuse) the opt-out annotation.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/admission.h"
#include "webhook/admission_review.h"

namespace iogate {

struct PodReview {
  // Set when the endpoint answers without looking at the pod: a refused body, a bad review, an
  // operation or resource it does not act on, an opted-out pod.
  std::optional<AdmissionOutcome> answer;
  AdmissionRequest request;  // request.object is a JSON object from here on
  // "mutate CREATE pod ns/name uid=U dry-run": how the log line starts.
  std::string subject;
  std::string pod;                    // pod_display_name()
  std::vector<std::string> warnings;  // for the response (a refused opt-out)
};

PodReview review_pod(std::string_view endpoint, std::string_view body, const WebhookConfig& config,
                     std::initializer_list<std::string_view> operations);

// request.object's annotation `key` when it is there as a string.
std::optional<std::string> pod_annotation(const AdmissionRequest& r, const char* key);

// An answer refusing the request, with status.code `code` (400 a bad request, 403 the policy).
AdmissionOutcome refusal(const PodReview& review, int code, const std::string& message);

}  // namespace iogate
