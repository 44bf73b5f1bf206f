// AdmissionReview requests shaped as the API server sends them (the example in the Kubernetes
// docs, "Dynamic Admission Control": request.kind/resource/requestKind, userInfo, options), pods
// as a Deployment or Job creates them, and helpers that apply a response's patch.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "example_policy.h"
#include "policy/policy.h"
#include "webhook/admission.h"

namespace iogate::test {

using nlohmann::json;

inline Policy load_policy(const std::string& body) {
  // Enforce unless the body says: these tests judge what the webhook enforces.
  const bool names_mode = body.rfind("mode:", 0) == 0 || body.find("\nmode:") != std::string::npos;
  auto p = parse_policy(std::string("apiVersion: iogate.io/v1\nkind: StoragePolicy\nmetadata: {name: test}\n") +
                            (names_mode ? "" : "mode: enforce\n") + body,
                        "test.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return *p;
}

// The manual's example policy (examples/policy.yaml): max(10,000, 5,000 × GPUs) IOPS, not on an HDD.
inline Policy gpu_feed(const std::string& mode = "enforce") {
  auto p = parse_policy(testing::example_policy_text(mode), "test.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return *p;
}

inline json gpu_container(const std::string& gpus, const std::string& name = "train") {
  json c = {{"name", name},
            {"image", "nvcr.io/nvidia/pytorch:24.01-py3"},
            {"command", {"python", "train.py"}},
            {"volumeMounts", {{{"name", "dataset"}, {"mountPath", "/datasets/imagenet"}}}},
            {"terminationMessagePath", "/dev/termination-log"},
            {"imagePullPolicy", "IfNotPresent"}};
  if (!gpus.empty()) {
    c["resources"] = {{"limits", {{"nvidia.com/gpu", gpus}, {"memory", "64Gi"}}},
                      {"requests", {{"nvidia.com/gpu", gpus}, {"cpu", "8"}, {"memory", "64Gi"}}}};
  } else {
    c["resources"] = {{"requests", {{"cpu", "500m"}}}};
  }
  return c;
}

// A pod as the API server hands it to admission: defaults filled in, no status.
inline json pod(const std::string& gpus, const std::string& name = "train-0") {
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name},
              {"namespace", "ml"},
              {"labels", {{"app", "resnet"}, {"team", "vision"}}},
              {"annotations", {{"example.com/owner", "vision-team"}}}}},
            {"spec",
             {{"containers", {gpu_container(gpus)}},
              {"volumes",
               {{{"name", "dataset"}, {"persistentVolumeClaim", {{"claimName", "imagenet"}}}},
                {{"name", "kube-api-access-x2k4f"}, {"projected", {{"defaultMode", 420}}}}}},
              {"restartPolicy", "Never"},
              {"schedulerName", "default-scheduler"},
              {"serviceAccountName", "default"},
              {"tolerations",
               {{{"key", "node.kubernetes.io/not-ready"},
                 {"operator", "Exists"},
                 {"effect", "NoExecute"},
                 {"tolerationSeconds", 300}}}}}}};
  return p;
}

inline json review_json(const json& object, const std::string& operation = "CREATE", const json& old_object = nullptr,
                        bool dry_run = false) {
  // What the API server puts in request.name: the object's name ("" before generateName is applied).
  std::string name;
  if (object.is_object() && object.contains("metadata") && object["metadata"].is_object()) {
    const json& n = object["metadata"].value("name", json());
    if (n.is_string()) name = n.get<std::string>();
  }
  json request = {
      {"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
      {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
      {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
      {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
      {"requestResource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
      {"name", name},
      {"namespace", "ml"},
      {"operation", operation},
      {"userInfo",
       {{"username", "system:serviceaccount:kube-system:job-controller"},
        {"uid", "014fbff9a07c"},
        {"groups", {"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}}},
      {"object", object},
      {"oldObject", old_object},
      {"dryRun", dry_run},
      {"options",
       {{"apiVersion", "meta.k8s.io/v1"}, {"kind", operation == "UPDATE" ? "UpdateOptions" : "CreateOptions"}}},
  };
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
}

inline std::string review(const json& object, const std::string& operation = "CREATE", const json& old_object = nullptr,
                          bool dry_run = false) {
  return review_json(object, operation, old_object, dry_run).dump();
}

// The response object, after checking the envelope every answer must have.
inline json response_of(const AdmissionOutcome& o) {
  REQUIRE_MESSAGE(o.http_status == 200, o.body);
  CHECK(o.content_type == "application/json");
  json r = json::parse(o.body);
  CHECK(r["apiVersion"] == "admission.k8s.io/v1");
  CHECK(r["kind"] == "AdmissionReview");
  REQUIRE(r["response"].is_object());
  CHECK(o.log_line.find('\n') == std::string::npos);
  return r["response"];
}

// The JSON patch of an answer (an empty array when it has none).
inline json patch_of(const AdmissionOutcome& o) {
  json r = response_of(o);
  if (!r.contains("patch")) {
    CHECK_FALSE(r.contains("patchType"));
    return json::array();
  }
  CHECK(r["patchType"] == "JSONPatch");
  auto bytes = decode_base64(r["patch"].get<std::string>());
  REQUIRE(bytes);
  json ops = json::parse(*bytes);
  REQUIRE(ops.is_array());
  return ops;
}

// The pod with the answer's patch applied, as the API server applies it.
inline json patched(const json& pod, const AdmissionOutcome& o) { return pod.patch(patch_of(o)); }

inline json node_affinity(const json& pod) { return pod.value("/spec/affinity/nodeAffinity"_json_pointer, json()); }

inline json expr(const std::string& key, const std::string& op, json values) {
  return {{"key", key}, {"operator", op}, {"values", values}};
}
inline json not_hdd() { return expr("iogate.io/disk-class", "NotIn", {"hdd"}); }
inline json iops_gt(const std::string& v) { return expr("iogate.io/randread-iops", "Gt", {v}); }

inline WebhookConfig config_for(const Policy& p) {
  WebhookConfig c;
  c.policy = &p;
  return c;
}

}  // namespace iogate::test
