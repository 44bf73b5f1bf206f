// libFuzzer target for the webhook's admission decisions (agent/webhook/admission.h).
//
// The input is an HTTP request body, fed to handle_mutate() and handle_validate() under one of
// three policies (picked by the input's length, so every policy meets every shape): the
// image-classification profile (NotIn + Gt), a policy with device-class floors and an allow-list
// (several terms, In), and a warn-mode one (preferred terms). The node lookup returns one fixed,
// slow, tainted node. A broken contract aborts with __builtin_trap(), which libFuzzer reports as a
// crash and saves the input:
//   - only 200 (an AdmissionReview), 400 and 413 (text) come back, never 500 (an exception);
//   - a 200 body is a v1 AdmissionReview with a string uid and a boolean allowed, a refusal has
//     status.code 400 or 403, a patch is base64 of a JSON array;
//   - the patch applies to the request's object (nlohmann's json::patch, as the API server would);
//   - the patched pod, reviewed again, gets no patch (idempotence: reinvocationPolicy IfNeeded);
//   - log lines are one line.
//
// Built and run by tests/fuzz/run_fuzz.sh admission (ctest: fuzz.admission), with clang++ and
// -fsanitize=fuzzer,address,undefined.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "policy/policy.h"
#include "webhook/admission.h"

namespace {

using nlohmann::json;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

iogate::Policy load(std::string_view yaml) {
  auto p = yaml.substr(0, 8) == "profile:" ? iogate::builtin_policy(yaml) : iogate::parse_policy(yaml, "fuzz.yaml");
  check(p.ok());
  return *p;
}

struct Fixture {
  iogate::Policy policies[3] = {
      load("profile:image-classification"),
      load("apiVersion: iogate.io/v1\nkind: StoragePolicy\nrules:\n"
           "  - {name: local, selector: {device_classes: [nvme]}, min_iops: 50000, min_iops_per_gpu: 7000}\n"
           "  - {name: vision, selector: {pod_labels: {team: vision}}, min_iops: 2000}\n"
           "  - {name: data, selector: {paths: [/data]}, min_bandwidth: 300MB/s, allowed_classes: [nvme, sata-ssd]}\n"),
      load("apiVersion: iogate.io/v1\nkind: StoragePolicy\nmode: warn\nrules:\n"
           "  - {name: r, min_iops_per_gpu: 5000, forbidden_classes: [hdd, usb]}\n"),
  };
  json node = json::parse(R"({"metadata":{"name":"gpu-7","labels":{"iogate.io/randread-iops":"8120",
      "iogate.io/disk-class":"nvme"}},"spec":{"taints":[{"key":"iogate.io/storage-below-policy","effect":"NoSchedule"}]}})");
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

iogate::NodeView lookup(const std::string& name) { return {true, name, fixture().node, ""}; }

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The response of a 200 answer, its envelope checked; null for other statuses.
json checked_response(const iogate::AdmissionOutcome& o) {
  check(o.log_line.find('\n') == std::string::npos);
  check(o.http_status == 200 || o.http_status == 400 || o.http_status == 413);
  if (o.http_status != 200) {
    check(o.content_type.rfind("text/plain", 0) == 0);
    return nullptr;
  }
  json review = json::parse(o.body, nullptr, false);
  check(review.is_object());
  check(review.value("apiVersion", "") == "admission.k8s.io/v1");
  check(review.value("kind", "") == "AdmissionReview");
  const json& r = review["response"];
  check(r.is_object() && r["uid"].is_string() && r["allowed"].is_boolean());
  if (!r["allowed"].get<bool>()) {
    check(r["status"]["code"] == 400 || r["status"]["code"] == 403);
    check(!r.contains("patch"));
  }
  return r;
}

json patch_of(const json& response) {
  if (!response.contains("patch")) return json::array();
  check(response["patchType"] == "JSONPatch");
  auto bytes = iogate::decode_base64(response["patch"].get<std::string>());
  check(bytes.has_value());
  json ops = json::parse(*bytes, nullptr, false);
  check(ops.is_array() && !ops.empty());
  return ops;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  iogate::WebhookConfig config;
  config.policy = &fixture().policies[size % 3];
  config.allow_opt_out = (size % 2) == 0;
  config.extra_gpu_resources = {"gpu.intel.com/i915"};

  checked_response(iogate::handle_validate(body, config, lookup));

  json response = checked_response(iogate::handle_mutate(body, config));
  json ops = response.is_object() ? patch_of(response) : json::array();
  if (ops.empty()) return 0;

  // A patch came back, so the body was a review of a pod object: apply it, then review again.
  json review = json::parse(body, nullptr, false);
  check(review.is_object() && review["request"]["object"].is_object());
  json patched;
  try {
    patched = review["request"]["object"].patch(ops);
  } catch (const json::exception&) {
    check(false);
  }
  review["request"]["object"] = patched;
  std::string again = dump(review);
  json second = checked_response(iogate::handle_mutate(again, config));
  check(second.is_object() && second["allowed"] == true && !second.contains("patch"));
  return 0;
}
