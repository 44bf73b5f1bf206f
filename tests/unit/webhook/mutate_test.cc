#include <doctest/doctest.h>

#include <fmt/format.h>

#include "admission_fixtures.h"
#include "heap_peak.h"
#include "webhook/admission.h"
#include "webhook/json_footprint.h"

namespace iogate {
namespace {

using namespace iogate::test;

const json kUid = "705ab4f5-6393-11e8-b7cc-42010a800002";

// The required terms after the patch, checked to be the only change to the node affinity's
// required part.
json required_terms(const json& p) {
  return p.value(
      "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"_json_pointer,
      json());
}

TEST_CASE("mutate: a GPU pod without affinity gets one required term on the node agent's labels") {
  Policy policy = gpu_feed();
  json p = pod("8");
  AdmissionOutcome o = handle_mutate(review(p), config_for(policy));
  json r = response_of(o);
  CHECK(r["uid"] == kUid);
  CHECK(r["allowed"] == true);
  json after = patched(p, o);
  // max(10,000, 5,000 × 8) = 40,000: a node labelled 40000 passes Gt 39999.
  json want = {{"requiredDuringSchedulingIgnoredDuringExecution",
                {{"nodeSelectorTerms", json::array({{{"matchExpressions", {not_hdd(), iops_gt("39999")}}}})}}}};
  CHECK(node_affinity(after) == want);
  // Nothing else changed but the annotation explaining the number.
  json without = after;
  without["spec"].erase("affinity");
  without["metadata"]["annotations"].erase("iogate.io/node-requirements");
  CHECK(without == p);
  std::string why = after["metadata"]["annotations"]["iogate.io/node-requirements"];
  CHECK(why.find("iogate.io/randread-iops Gt 39999") != std::string::npos);
  CHECK(why.find("8 GPUs") != std::string::npos);
  CHECK(why.find("rule gpu-feed: >= 40,000 IOPS") != std::string::npos);
  CHECK(o.log_line.find("mutate CREATE pods ml/train-0 uid=705ab4f5") == 0);
}

TEST_CASE("mutate: a demand rule asks for a node that sustains the pod's GPUs, and says so in a warning") {
  Policy policy = load_policy(
      "mode: enforce\nworkload: {mode: auto}\nrules:\n"
      "  - name: feed-gpus\n    demand: {workload: resnet50, accelerator: h100, sample_size: 110k}\n"
      "    forbidden_classes: [hdd]\n");
  json p = pod("8");
  AdmissionOutcome o = handle_mutate(review(p), config_for(policy));
  json r = response_of(o);
  CHECK(r["allowed"] == true);
  json after = patched(p, o);
  json want = {
      {"requiredDuringSchedulingIgnoredDuringExecution",
       {{"nodeSelectorTerms",
         json::array({{{"matchExpressions",
                        {not_hdd(),
                         {{"key", "iogate.io/accelerators.feed-gpus"}, {"operator", "Gt"}, {"values", {"7"}}}}}}})}}}};
  CHECK(node_affinity(after) == want);
  REQUIRE(r["warnings"].size() == 1);
  CHECK(r["warnings"][0] ==
        "iogate: needs a node that sustains 8 accelerators of rule feed-gpus (resnet50 on h100: 1,786 samples/s per "
        "accelerator; AU >= 0.90 at 14,286 samples/s (1,786/GPU x 8 GPUs)): iogate.io/accelerators.feed-gpus Gt 7");
  std::string why = after["metadata"]["annotations"]["iogate.io/node-requirements"];
  CHECK(why.find("rule feed-gpus") != std::string::npos);
  CHECK(why.find("a node that sustains 8 accelerators") != std::string::npos);
  // A second call adds nothing (reinvocationPolicy IfNeeded).
  CHECK(patch_of(handle_mutate(review(after), config_for(policy))).empty());
  // A pod the rule selects without GPUs is judged for one accelerator.
  Policy labelled = load_policy(
      "mode: warn\nworkload: {mode: auto}\nrules:\n"
      "  - name: vision\n    selector: {pod_labels: {team: vision}}\n"
      "    demand: {samples_per_s: 900, sample_size: 110k}\n");
  json no_gpus = pod("");
  json w = response_of(handle_mutate(review(no_gpus), config_for(labelled)));
  REQUIRE(w["warnings"].size() == 1);
  CHECK(w["warnings"][0].get<std::string>().find("iogate: prefers a node that sustains 1 accelerator of rule vision") ==
        0);
}

TEST_CASE("mutate: the annotation's key is one JSON Pointer token, '/' escaped as ~1") {
  Policy policy = gpu_feed();
  json ops = patch_of(handle_mutate(review(pod("1")), config_for(policy)));
  bool found = false;
  for (const json& op : ops) {
    if (op["path"] == "/metadata/annotations/iogate.io~1node-requirements") found = true;
    CHECK(op["path"].get<std::string>().find("iogate.io/") == std::string::npos);
  }
  CHECK(found);
  // A pod without annotations gets the whole map.
  json p = pod("1");
  p["metadata"].erase("annotations");
  json after = patched(p, handle_mutate(review(p), config_for(policy)));
  CHECK(after["metadata"]["annotations"].size() == 1);
}

TEST_CASE("mutate: existing required and preferred affinity: ours join the term, nothing is dropped") {
  Policy policy = gpu_feed();
  json p = pod("2");
  json zone = expr("topology.kubernetes.io/zone", "In", {"us-east-1a", "us-east-1b"});
  json preferred =
      json::array({{{"weight", 50}, {"preference", {{"matchExpressions", {expr("gpu", "In", {"a100"})}}}}}});
  json anti = {
      {"requiredDuringSchedulingIgnoredDuringExecution",
       {{{"labelSelector", {{"matchLabels", {{"app", "resnet"}}}}}, {"topologyKey", "kubernetes.io/hostname"}}}}};
  p["spec"]["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", {{{"matchExpressions", {zone}}}}}}},
        {"preferredDuringSchedulingIgnoredDuringExecution", preferred}}},
      {"podAntiAffinity", anti}};
  json after = patched(p, handle_mutate(review(p), config_for(policy)));
  json na = node_affinity(after);
  // 2 GPUs: max(10,000, 10,000).
  CHECK(required_terms(after) == json::array({{{"matchExpressions", {zone, not_hdd(), iops_gt("9999")}}}}));
  CHECK(na["preferredDuringSchedulingIgnoredDuringExecution"] == preferred);
  CHECK(after["spec"]["affinity"]["podAntiAffinity"] == anti);
}

TEST_CASE("mutate: several nodeSelectorTerms (ORed) each get the expressions; an empty term stays empty") {
  Policy policy = gpu_feed();
  json p = pod("1");
  json a = expr("pool", "In", {"a"});
  json fields = json::array({expr("metadata.name", "NotIn", {"bad-node"})});
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
      json::array({{{"matchExpressions", {a}}},
                   {{"matchFields", fields}},
                   json::object(),
                   {{"matchExpressions", json::array()}, {"matchFields", json::array()}}});
  json after = patched(p, handle_mutate(review(p), config_for(policy)));
  CHECK(required_terms(after) ==
        json::array({{{"matchExpressions", {a, not_hdd(), iops_gt("9999")}}},
                     {{"matchFields", fields}, {"matchExpressions", {not_hdd(), iops_gt("9999")}}},
                     json::object(),
                     {{"matchExpressions", json::array()}, {"matchFields", json::array()}}}));
}

TEST_CASE("mutate: an expression the pod already has (values in another order) is not repeated") {
  Policy policy = load_policy("rules:\n  - {name: r, min_iops: 1000, forbidden_classes: [hdd, usb]}\n");
  json p = pod("1");
  json own = expr("iogate.io/disk-class", "NotIn", {"hdd", "usb"});
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
      json::array({{{"matchExpressions", {own}}}});
  json after = patched(p, handle_mutate(review(p), config_for(policy)));
  CHECK(required_terms(after) == json::array({{{"matchExpressions", {own, iops_gt("999")}}}}));
}

TEST_CASE("mutate: a Job's pod without a name (generateName) is handled and logged by its prefix") {
  Policy policy = gpu_feed();
  json p = pod("4");
  p["metadata"].erase("name");
  p["metadata"]["generateName"] = "resnet-train-";
  p["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "resnet-train";
  AdmissionOutcome o = handle_mutate(review(p), config_for(policy));
  json after = patched(p, o);
  CHECK(required_terms(after) == json::array({{{"matchExpressions", {not_hdd(), iops_gt("19999")}}}}));
  CHECK(o.log_line.find("ml/resnet-train-*") != std::string::npos);
}

TEST_CASE("mutate: a CPU-only pod passes unchanged") {
  Policy policy = gpu_feed();
  AdmissionOutcome o = handle_mutate(review(pod("")), config_for(policy));
  json r = response_of(o);
  CHECK(r["allowed"] == true);
  CHECK(r["uid"] == kUid);
  CHECK_FALSE(r.contains("patch"));
  CHECK_FALSE(r.contains("warnings"));
  CHECK(o.log_line.find("no patch") != std::string::npos);
}

TEST_CASE("mutate: GPUs counted as the scheduler does, extra resource names included") {
  Policy policy = gpu_feed();
  json p = pod("");
  p["spec"]["containers"][0]["resources"]["limits"]["gpu.intel.com/i915"] = "3";
  WebhookConfig config = config_for(policy);
  CHECK(patch_of(handle_mutate(review(p), config)).empty());
  config.extra_gpu_resources = {"gpu.intel.com/i915"};
  CHECK(required_terms(patched(p, handle_mutate(review(p), config))) ==
        json::array({{{"matchExpressions", {not_hdd(), iops_gt("14999")}}}}));
}

TEST_CASE("mutate: a CPU pod a rule selects by labels gets that rule's floor") {
  Policy policy =
      load_policy("rules:\n  - name: vision\n    selector: {pod_labels: {team: vision}}\n    min_iops: 3000\n");
  json p = pod("");
  CHECK(required_terms(patched(p, handle_mutate(review(p), config_for(policy)))) ==
        json::array({{{"matchExpressions", {iops_gt("2999")}}}}));
  p["metadata"]["labels"]["team"] = "nlp";
  CHECK(patch_of(handle_mutate(review(p), config_for(policy))).empty());
}

TEST_CASE("mutate: a dry-run request gets the same answer (the handler has no side effects)") {
  Policy policy = gpu_feed();
  json p = pod("8");
  AdmissionOutcome real = handle_mutate(review(p), config_for(policy));
  AdmissionOutcome dry = handle_mutate(review(p, "CREATE", nullptr, true), config_for(policy));
  CHECK(dry.body == real.body);
  CHECK(dry.log_line.find("dry-run") != std::string::npos);
  CHECK(real.log_line.find("dry-run") == std::string::npos);
}

TEST_CASE("mutate: idempotent: the patched pod, reviewed again, gets no patch") {
  Policy policy = gpu_feed();
  json zone = expr("topology.kubernetes.io/zone", "In", {"a"});
  json p = pod("8");
  p["metadata"]["annotations"]["iogate.io/inject-preflight"] = "dataset";
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
      json::array({{{"matchExpressions", {zone}}}, {{"matchExpressions", {expr("pool", "Exists", json::array())}}}});
  json once = patched(p, handle_mutate(review(p), config_for(policy)));
  CHECK(once != p);
  AdmissionOutcome again = handle_mutate(review(once), config_for(policy));
  CHECK(patch_of(again).empty());
  CHECK(again.log_line.find("already there") != std::string::npos);

  Policy warn = gpu_feed("warn");
  json w = patched(pod("8"), handle_mutate(review(pod("8")), config_for(warn)));
  CHECK(patch_of(handle_mutate(review(w), config_for(warn))).empty());
}

TEST_CASE("mutate: inject-preflight adds the initContainer first, the volume read-only, the policy ConfigMap") {
  Policy policy = gpu_feed();
  WebhookConfig config = config_for(policy);
  config.preflight_image = "registry.example.com/iogate:0.1.0";
  config.policy_configmap = "storage-policy";
  json p = pod("4");
  p["metadata"]["annotations"]["iogate.io/inject-preflight"] = "dataset";
  json istio = {{"name", "istio-init"}, {"image", "istio/proxyv2"}};
  p["spec"]["initContainers"] = json::array({istio});
  json after = patched(p, handle_mutate(review(p), config));

  json env = json::array({
      {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "POD_NAMESPACE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}},
      {{"name", "NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
      {{"name", "CONTAINER_NAME"}, {"value", "iogate-preflight"}},
  });
  json want = {
      {"name", "iogate-preflight"},
      {"image", "registry.example.com/iogate:0.1.0"},
      {"args", {"preflight", "/datasets/imagenet", "--policy", "/etc/iogate/policy.yaml"}},
      {"env", env},
      {"volumeMounts",
       {{{"name", "dataset"}, {"mountPath", "/datasets/imagenet"}, {"readOnly", true}},
        {{"name", "iogate-policy"}, {"mountPath", "/etc/iogate"}, {"readOnly", true}}}},
      {"securityContext",
       {{"readOnlyRootFilesystem", true},
        {"allowPrivilegeEscalation", false},
        {"capabilities", {{"drop", json::array({"ALL"})}}}}},
  };
  REQUIRE(after["spec"]["initContainers"].size() == 2);
  CHECK(after["spec"]["initContainers"][0] == want);
  CHECK(after["spec"]["initContainers"][1] == istio);
  json volumes = after["spec"]["volumes"];
  REQUIRE(volumes.size() == 3);
  CHECK(volumes[2] == json{{"name", "iogate-policy"},
                           {"configMap",
                            {{"name", "storage-policy"},
                             {"items", json::array({{{"key", "policy.yaml"}, {"path", "policy.yaml"}}})}}}});
  // The affinity is there as well; the preflight container holds no GPU, so the count is unchanged.
  CHECK(required_terms(after) == json::array({{{"matchExpressions", {not_hdd(), iops_gt("19999")}}}}));
}

TEST_CASE("mutate: the injected preflight gets the configured requests and limits, and none where none are") {
  Policy policy = gpu_feed();
  WebhookConfig config = config_for(policy);
  json p = pod("4");
  p["metadata"]["annotations"]["iogate.io/inject-preflight"] = "dataset";
  CHECK_FALSE(patched(p, handle_mutate(review(p), config))["spec"]["initContainers"][0].contains("resources"));
  config.preflight_requests = {{"cpu", "1"}, {"memory", "256Mi"}};
  config.preflight_limits = {{"cpu", "1"}, {"memory", "256Mi"}};
  json after = patched(p, handle_mutate(review(p), config));
  CHECK(after["spec"]["initContainers"][0]["resources"] ==
        json{{"requests", {{"cpu", "1"}, {"memory", "256Mi"}}}, {"limits", {{"cpu", "1"}, {"memory", "256Mi"}}}});
  config.preflight_requests.clear();
  after = patched(p, handle_mutate(review(p), config));
  CHECK(after["spec"]["initContainers"][0]["resources"] == json{{"limits", {{"cpu", "1"}, {"memory", "256Mi"}}}});
}

TEST_CASE("mutate: inject-preflight details: no initContainers yet, a subPath, an unmounted volume, a missing one") {
  Policy policy = gpu_feed();
  json p = pod("");
  p["metadata"]["annotations"]["iogate.io/inject-preflight"] = "dataset";
  p["spec"]["containers"][0]["volumeMounts"][0]["subPath"] = "train";
  json after = patched(p, handle_mutate(review(p), config_for(policy)));
  REQUIRE(after["spec"]["initContainers"].size() == 1);
  CHECK(after["spec"]["initContainers"][0]["volumeMounts"][0] ==
        json{{"name", "dataset"}, {"mountPath", "/datasets/imagenet"}, {"readOnly", true}, {"subPath", "train"}});

  // Mounted by no container: /data.
  json q = pod("");
  q["metadata"]["annotations"]["iogate.io/inject-preflight"] = "dataset";
  q["spec"]["containers"][0].erase("volumeMounts");
  json after_q = patched(q, handle_mutate(review(q), config_for(policy)));
  CHECK(after_q["spec"]["initContainers"][0]["args"][1] == "/data");

  // A volume the pod does not have: refused, the pod asked to be checked and cannot be.
  q["metadata"]["annotations"]["iogate.io/inject-preflight"] = "datasett";
  json r = response_of(handle_mutate(review(q), config_for(policy)));
  CHECK(r["allowed"] == false);
  CHECK(r["status"]["code"] == 400);
  CHECK(r["status"]["message"].get<std::string>().find("\"datasett\"") != std::string::npos);

  // The pod's own iogate-policy volume is used, not duplicated.
  json s = pod("");
  s["metadata"]["annotations"]["iogate.io/inject-preflight"] = "dataset";
  s["spec"]["volumes"].push_back({{"name", "iogate-policy"}, {"configMap", {{"name", "mine"}}}});
  json after_s = patched(s, handle_mutate(review(s), config_for(policy)));
  CHECK(after_s["spec"]["volumes"] == s["spec"]["volumes"]);
}

TEST_CASE("mutate: the opt-out annotation, honoured only where the configuration allows it") {
  Policy policy = gpu_feed();
  json p = pod("8");
  p["metadata"]["annotations"]["iogate.io/skip"] = "true";
  WebhookConfig config = config_for(policy);
  config.allow_opt_out = true;
  AdmissionOutcome allowed = handle_mutate(review(p), config);
  CHECK(patch_of(allowed).empty());
  CHECK(allowed.log_line.find("opted out") != std::string::npos);

  config.allow_opt_out = false;
  AdmissionOutcome refused = handle_mutate(review(p), config);
  json r = response_of(refused);
  CHECK(r["allowed"] == true);
  REQUIRE(r["warnings"].size() == 1);
  CHECK(r["warnings"][0].get<std::string>().find("iogate.io/skip is ignored") != std::string::npos);
  CHECK(required_terms(patched(p, refused)) == json::array({{{"matchExpressions", {not_hdd(), iops_gt("39999")}}}}));
}

TEST_CASE("mutate: warn mode prefers fast nodes, off leaves the pod alone") {
  Policy warn = gpu_feed("warn");
  json p = pod("8");
  json preferred =
      json::array({{{"weight", 5}, {"preference", {{"matchExpressions", {expr("gpu", "In", {"h100"})}}}}}});
  p["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = preferred;
  json after = patched(p, handle_mutate(review(p), config_for(warn)));
  json want = preferred;
  want.push_back({{"weight", 100}, {"preference", {{"matchExpressions", {not_hdd(), iops_gt("39999")}}}}});
  CHECK(node_affinity(after) == json{{"preferredDuringSchedulingIgnoredDuringExecution", want}});

  Policy off = gpu_feed("off");
  CHECK(patch_of(handle_mutate(review(p), config_for(off))).empty());
}

TEST_CASE("mutate: floors by device class become one term per floor, crossed with the pod's terms") {
  Policy policy = load_policy(
      "rules:\n"
      "  - {name: local, selector: {device_classes: [nvme]}, min_iops: 50000}\n"
      "  - {name: any, min_iops: 1000, forbidden_classes: [hdd]}\n");
  json p = pod("1");
  json a = expr("pool", "In", {"a"}), b = expr("pool", "In", {"b"});
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
      json::array({{{"matchExpressions", {a}}}, {{"matchExpressions", {b}}}});
  AdmissionOutcome o = handle_mutate(review(p), config_for(policy));
  json after = patched(p, o);
  json slow = expr("iogate.io/disk-class", "NotIn", {"nvme", "hdd"});
  json fast = expr("iogate.io/disk-class", "In", {"nvme"});
  CHECK(required_terms(after) == json::array({
                                     {{"matchExpressions", {a, slow, iops_gt("999")}}},
                                     {{"matchExpressions", {a, fast, iops_gt("49999")}}},
                                     {{"matchExpressions", {b, slow, iops_gt("999")}}},
                                     {{"matchExpressions", {b, fast, iops_gt("49999")}}},
                                 }));
  CHECK(patch_of(handle_mutate(review(after), config_for(policy))).empty());
}

TEST_CASE("mutate: allowed_classes is a closed list: In") {
  Policy policy = load_policy("rules:\n  - {name: r, min_iops_per_gpu: 5000, allowed_classes: [nvme, sata-ssd]}\n");
  json after = patched(pod("2"), handle_mutate(review(pod("2")), config_for(policy)));
  // mixed is not refused at admission: its leaves are unknown here, the node agent taints it.
  CHECK(required_terms(after) ==
        json::array({{{"matchExpressions",
                       {expr("iogate.io/disk-class", "In", {"nvme", "sata-ssd", "mixed"}), iops_gt("9999")}}}}));
}

TEST_CASE("mutate: a policy that allows no class refuses GPU pods in enforce mode") {
  Policy policy = load_policy(
      "rules:\n  - {name: a, min_iops: 10, allowed_classes: [nvme]}\n  - {name: b, min_iops: 10, forbidden_classes: "
      "[nvme, mixed]}\n");
  json r = response_of(handle_mutate(review(pod("1")), config_for(policy)));
  CHECK(r["allowed"] == false);
  CHECK(r["status"]["code"] == 403);
  CHECK(r["status"]["message"].get<std::string>().find("allows no disk class") != std::string::npos);
}

TEST_CASE("mutate: a workload other than randread has no IOPS label to compare: classes only") {
  Policy streaming = load_policy("workload: {rw: read, bs: 1m}\nrules:\n  - {name: seq, min_bandwidth: 500MB/s}\n");
  CHECK(patch_of(handle_mutate(review(pod("8")), config_for(streaming))).empty());
  Policy checkpointing = *builtin_policy("checkpointing");
  checkpointing.mode = PolicyMode::kEnforce;  // profiles are warn: required terms are enforce's
  CHECK(required_terms(patched(pod("8"), handle_mutate(review(pod("8")), config_for(checkpointing)))) ==
        json::array({{{"matchExpressions", {expr("iogate.io/disk-class", "NotIn", {"ram"})}}}}));
}

TEST_CASE("mutate: bandwidth floors count, converted to IOPS at the workload's block size") {
  Policy policy = load_policy("rules:\n  - {name: bw, min_bandwidth: 400MB/s}\n");  // 4k randread by default
  // 400,000,000 / 4096 = 97,656.25 → 97,657 IOPS.
  CHECK(required_terms(patched(pod("1"), handle_mutate(review(pod("1")), config_for(policy)))) ==
        json::array({{{"matchExpressions", {iops_gt("97656")}}}}));
}

TEST_CASE("mutate: path selectors: strict without a known dataset path, exact with injected preflight") {
  Policy policy = load_policy(
      "rules:\n"
      "  - {name: base, min_iops: 1000}\n"
      "  - {name: scratch, selector: {paths: [/scratch]}, min_iops: 80000}\n");
  // No injection: the dataset path is unknown, the scratch rule counts.
  CHECK(required_terms(patched(pod("1"), handle_mutate(review(pod("1")), config_for(policy)))) ==
        json::array({{{"matchExpressions", {iops_gt("79999")}}}}));
  // Injected preflight probes /datasets/imagenet: only base applies.
  json p = pod("1");
  p["metadata"]["annotations"]["iogate.io/inject-preflight"] = "dataset";
  CHECK(required_terms(patched(p, handle_mutate(review(p), config_for(policy)))) ==
        json::array({{{"matchExpressions", {iops_gt("999")}}}}));
}

TEST_CASE("mutate: a mistyped affinity is refused as a bad request, not patched blindly") {
  Policy policy = gpu_feed();
  for (json affinity :
       {json("fast"), json{{"nodeAffinity", 3}},
        json{{"nodeAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", "x"}}}}}},
        json{{"nodeAffinity",
              {{"requiredDuringSchedulingIgnoredDuringExecution",
                {{"nodeSelectorTerms", {{{"matchExpressions", 1}}}}}}}}}}) {
    CAPTURE(affinity.dump());
    json p = pod("1");
    p["spec"]["affinity"] = affinity;
    json r = response_of(handle_mutate(review(p), config_for(policy)));
    CHECK(r["allowed"] == false);
    CHECK(r["status"]["code"] == 400);
  }
  // null is unset, as the API reads it.
  json p = pod("1");
  p["spec"]["affinity"] = nullptr;
  CHECK(required_terms(patched(p, handle_mutate(review(p), config_for(policy)))).size() == 1);
}

}  // namespace
}  // namespace iogate

namespace iogate {
namespace {

using namespace iogate::test;

// Two alternatives: nvme nodes at 50,000 IOPS, the others at 1,000.
Policy two_floors() {
  return load_policy(
      "rules:\n  - {name: local, selector: {device_classes: [nvme]}, min_iops: 50000}\n  - {name: any, min_iops: "
      "1000}\n");
}

json with_required_terms(json p, json terms) {
  p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
      std::move(terms);
  return p;
}

// One term of `count` node names, the way a pod is kept off a list of nodes.
json hostname_term(int count) {
  json values = json::array();
  for (int i = 0; i < count; ++i) values.push_back(fmt::format("host-{:06}", i));
  return {{"matchExpressions", {expr("kubernetes.io/hostname", "NotIn", values)}}};
}

TEST_CASE("mutate: crossing terms with alternatives is bounded: too many terms, too much copied") {
  Policy policy = two_floors();
  json terms = json::array();
  for (int i = 0; i < 129; ++i) terms.push_back({{"matchExpressions", {expr("pool", "In", {std::to_string(i)})}}});
  json r = response_of(handle_mutate(review(with_required_terms(pod("1"), terms)), config_for(policy)));
  CHECK(r["allowed"] == false);
  CHECK(r["status"]["code"] == 400);
  CHECK(r["status"]["message"].get<std::string>().find("129 nodeSelectorTerms, each crossed with 2 alternatives") !=
        std::string::npos);
  terms.erase(terms.begin() + 128);  // 128 × 2 = 256: still fine
  CHECK(response_of(handle_mutate(review(with_required_terms(pod("1"), terms)), config_for(policy)))["allowed"] ==
        true);

  // A term of 1.2 MB: its copy for the second alternative is made by the API server, and what it
  // adds is counted against what a pod may grow by. Just under: allowed, the patch a few hundred
  // bytes. 1.8 MB: refused, naming the bytes.
  json q = with_required_terms(pod("1"), json::array({hostname_term(100000)}));
  AdmissionOutcome o = handle_mutate(review(q), config_for(policy));
  CHECK(response_of(o)["allowed"] == true);
  CHECK(patch_of(o).dump().size() < 2000);
  json slow = expr("iogate.io/disk-class", "NotIn", {"nvme"});
  json fast = expr("iogate.io/disk-class", "In", {"nvme"});
  json term = hostname_term(100000);
  json want = json::array({term, term});
  want[0]["matchExpressions"].push_back(slow);
  want[0]["matchExpressions"].push_back(iops_gt("999"));
  want[1]["matchExpressions"].push_back(fast);
  want[1]["matchExpressions"].push_back(iops_gt("49999"));
  CHECK(required_terms(patched(q, o)) == want);

  json big = response_of(
      handle_mutate(review(with_required_terms(pod("1"), json::array({hostname_term(150000)}))), config_for(policy)));
  CHECK(big["allowed"] == false);
  CHECK(big["status"]["code"] == 400);
  std::string message = big["status"]["message"];
  CHECK(message.find("the patch would add 2") == 0);
  CHECK(message.find("of them its own nodeSelectorTerms, repeated for each alternative after the first") !=
        std::string::npos);
  CHECK(message.find("more than a pod may grow by (1572864)") != std::string::npos);
}

TEST_CASE("mutate: the pod's own terms are extended in place, never repeated in the patch") {
  // 100,000 expressions in one term (3 MB of JSON) and one alternative: the patch adds ours to
  // the term and is as small as for a pod without affinity.
  json exprs = json::array();
  for (int i = 0; i < 100000; ++i) exprs.push_back({{"key", fmt::format("e{:06}", i)}, {"operator", "Exists"}});
  json p = with_required_terms(pod("2"), json::array({{{"matchExpressions", exprs}}}));
  Policy policy = gpu_feed();
  AdmissionOutcome o = handle_mutate(review(p), config_for(policy));
  json ops = patch_of(o);
  CHECK(ops.dump().size() < 1000);
  json want = exprs;
  want.push_back(not_hdd());
  want.push_back(iops_gt("9999"));
  CHECK(required_terms(patched(p, o)) == json::array({{{"matchExpressions", want}}}));

  // A term without matchExpressions (matchFields only) gets them whole; several terms with two
  // alternatives keep their order: T1A1, T1A2, T2A1, T2A2.
  json fields = {{"matchFields", {expr("metadata.name", "NotIn", {"bad"})}}};
  json a = {{"matchExpressions", {expr("pool", "In", {"a"})}}};
  json q = with_required_terms(pod("1"), json::array({fields, a}));
  Policy two = two_floors();
  json after = required_terms(patched(q, handle_mutate(review(q), config_for(two))));
  REQUIRE(after.size() == 4);
  CHECK(after[0]["matchFields"] == fields["matchFields"]);
  CHECK(after[1]["matchFields"] == fields["matchFields"]);
  CHECK(after[0]["matchExpressions"][1] == iops_gt("999"));
  CHECK(after[1]["matchExpressions"][1] == iops_gt("49999"));
  CHECK(after[2]["matchExpressions"][0] == a["matchExpressions"][0]);
  CHECK(after[3]["matchExpressions"][2] == iops_gt("49999"));
}

TEST_CASE("mutate: handling a review takes no more than its parse is counted for") {
  // The webhook lets a review in by json_footprint(body) (webhook_server.h): whatever /mutate
  // builds besides the parsed review must fit in what that counts, or reviews let in together
  // could take more than the budget. Shapes of 2 to 3 MB, each the most of one kind of content.
  json exprs = json::array();
  for (int i = 0; i < 80000; ++i) exprs.push_back({{"key", fmt::format("e{:06}", i)}, {"operator", "Exists"}});
  json affinity = with_required_terms(pod("4"), json::array({{{"matchExpressions", exprs}}}));
  json hosts = with_required_terms(pod("4"), json::array({hostname_term(200000)}));
  json two_terms = with_required_terms(pod("4"), json::array({hostname_term(40000), hostname_term(40000)}));
  json env = pod("4");
  for (int i = 0; i < 80000; ++i)
    env["spec"]["containers"][0]["env"].push_back({{"name", fmt::format("E{:06}", i)}, {"value", "1"}});
  json labels = pod("0");
  for (int i = 0; i < 150000; ++i) labels["metadata"]["labels"][fmt::format("l{:06}", i)] = "";
  labels["metadata"]["labels"]["team"] = "vision";
  Policy one = gpu_feed();
  Policy two = two_floors();
  Policy by_label = load_policy("rules:\n  - {name: vision, selector: {pod_labels: {team: vision}}, min_iops: 1000}\n");
  struct Case {
    const char* name;
    const json& pod;
    const Policy& policy;
    bool allowed;
  };
  for (const Case& c : {Case{"one term of 80,000 expressions", affinity, one, true},
                        Case{"the same, crossed with two alternatives", affinity, two, false},
                        Case{"one expression of 200,000 values", hosts, one, true},
                        Case{"two terms of 40,000 values, two alternatives", two_terms, two, true},
                        Case{"80,000 environment variables", env, two, true},
                        Case{"150,000 labels, a rule selecting one", labels, by_label, true}}) {
    CAPTURE(std::string(c.name));
    std::string body = review(c.pod);
    size_t counted = json_footprint(body);
    size_t before = reset_heap_peak();
    AdmissionOutcome o = handle_mutate(body, config_for(c.policy));
    size_t took = heap_peak() - before;
    CAPTURE(body.size());
    CAPTURE(took);
    CAPTURE(counted);
    CHECK(took <= counted);
    CHECK(response_of(o)["allowed"] == c.allowed);
  }
}

}  // namespace
}  // namespace iogate
