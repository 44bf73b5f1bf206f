#include <doctest/doctest.h>

#include "kube/operations.h"

namespace iogate {
namespace {

using nlohmann::json;

json container(const std::string& name, json limits, json requests = json::object(), json mounts = json::array()) {
  json c = {{"name", name}, {"resources", {{"limits", limits}, {"requests", requests}}}, {"volumeMounts", mounts}};
  return c;
}

json pod(json containers, json init = json::array(), json volumes = json::array()) {
  return {{"spec", {{"containers", containers}, {"initContainers", init}, {"volumes", volumes}}}};
}

TEST_CASE("pod_gpu_count: the scheduler's effective count") {
  struct Case {
    const char* name;
    json pod;
    int gpus;
  } cases[] = {
      {"no resources", pod(json::array({{{"name", "a"}}})), 0},
      {"one container, string quantity", pod({container("a", {{"nvidia.com/gpu", "2"}})}), 2},
      {"integer quantity", pod({container("a", {{"nvidia.com/gpu", 4}})}), 4},
      {"nvidia and amd summed over containers",
       pod({container("a", {{"nvidia.com/gpu", "2"}}),
            container("b", {{"amd.com/gpu", "1"}, {"nvidia.com/gpu", "1"}})}),
       4},
      {"requests when no limit", pod({container("a", json::object(), {{"nvidia.com/gpu", "3"}})}), 3},
      {"the limit wins over requests", pod({container("a", {{"nvidia.com/gpu", "2"}}, {{"nvidia.com/gpu", "9"}})}), 2},
      {"other resources ignored", pod({container("a", {{"cpu", "4"}, {"memory", "1Gi"}, {"example.com/fpga", "1"}})}),
       0},
      {"garbage quantity counts as none", pod({container("a", {{"nvidia.com/gpu", "lots"}})}), 0},
      {"an init container larger than the main ones sets the count",
       pod({container("a", {{"nvidia.com/gpu", "1"}})}, {container("warm", {{"nvidia.com/gpu", "4"}})}), 4},
      {"init containers run one at a time: max, not sum",
       pod({container("a", {{"nvidia.com/gpu", "1"}})},
           {container("i1", {{"nvidia.com/gpu", "2"}}), container("i2", {{"nvidia.com/gpu", "3"}})}),
       3},
      {"sidecars (restartPolicy Always) add to the main containers",
       [] {
         json side = container("side", {{"nvidia.com/gpu", "1"}});
         side["restartPolicy"] = "Always";
         return pod({container("a", {{"nvidia.com/gpu", "2"}})}, {side});
       }(),
       3},
      {"a sidecar adds to the init containers after it",
       [] {
         json side = container("side", {{"nvidia.com/gpu", "1"}});
         side["restartPolicy"] = "Always";
         return pod({container("a", {{"nvidia.com/gpu", "1"}})}, {side, container("after", {{"nvidia.com/gpu", "4"}})});
       }(),
       5},
      {"no spec at all", json::object(), 0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(pod_gpu_count(c.pod) == c.gpus);
  }
}

TEST_CASE("pod_gpu_count: extra resource names, and garbage quantities that must not overflow") {
  json p = pod({container("a", {{"nvidia.com/gpu", "1"}, {"gpu.intel.com/i915", "2"}}),
                container("b", json::object(), {{"gpu.intel.com/i915", 3}})});
  CHECK(pod_gpu_count(p) == 1);
  CHECK(pod_gpu_count(p, {"gpu.intel.com/i915"}) == 6);
  // A name given twice, or one of the built-in ones, is still counted once.
  CHECK(pod_gpu_count(p, {"gpu.intel.com/i915", "nvidia.com/gpu"}) == 6);

  CHECK(pod_gpu_count(pod({container("a", {{"nvidia.com/gpu", "99999999999999999999999"}})})) == 1'000'000);
  CHECK(pod_gpu_count(pod({container("a", {{"nvidia.com/gpu", -5}})})) == 0);
  CHECK(pod_gpu_count(pod({container("a", {{"nvidia.com/gpu", "-5"}})})) == 0);
  CHECK(pod_gpu_count(pod({container("a", {{"nvidia.com/gpu", 2.5}})})) == 0);
  CHECK(pod_gpu_count(pod({container("a", {{"nvidia.com/gpu", ""}})})) == 0);
  json many = json::array();
  for (int i = 0; i < 3000; ++i) many.push_back(container("c", {{"nvidia.com/gpu", "2147483647"}}));
  CHECK(pod_gpu_count(pod(many)) == 1'000'000);
}

json mount(const std::string& volume, const std::string& path) { return {{"name", volume}, {"mountPath", path}}; }

TEST_CASE("pvc_for_path: the longest mountPath prefix, resolved through the volumes") {
  json volumes = json::array({
      {{"name", "dataset"}, {"persistentVolumeClaim", {{"claimName", "imagenet"}}}},
      {{"name", "cache"}, {"persistentVolumeClaim", {{"claimName", "cache-pvc"}}}},
      {{"name", "scratch"}, {"emptyDir", json::object()}},
      {{"name", "host"}, {"hostPath", {{"path", "/mnt/nvme"}}}},
      {{"name", "eph"}, {"ephemeral", {{"volumeClaimTemplate", json::object()}}}},
  });
  json p = pod({container("train", json::object(), json::object(),
                          {mount("dataset", "/data"), mount("cache", "/data/cache"), mount("scratch", "/scratch"),
                           mount("host", "/host/"), mount("eph", "/eph")})},
               {container("preflight", json::object(), json::object(), {mount("cache", "/probe")})}, volumes);
  struct Case {
    std::string path, hint;
    std::optional<std::string> claim;
  } cases[] = {
      {"/data", "", "imagenet"},
      {"/data/train/0001.jpg", "", "imagenet"},
      {"/data/cache", "", "cache-pvc"},
      {"/data/cache/x", "", "cache-pvc"},
      {"/data/cachex", "", "imagenet"},  // a path-component prefix, not a string prefix
      {"/database", "", std::nullopt},
      {"/scratch/x", "", std::nullopt},  // emptyDir
      {"/host/x", "", std::nullopt},     // hostPath, trailing slash in mountPath
      {"/host", "", std::nullopt},
      {"/eph/x", "", std::nullopt},  // generic ephemeral: lives and dies with the pod
      {"/elsewhere", "", std::nullopt},
      {"/probe/d", "", "cache-pvc"},  // found in an init container
      {"/probe/d", "preflight", "cache-pvc"},
      {"/data/x", "preflight", std::nullopt},  // the hinted container does not mount /data
      {"/data/x", "no-such-container", "imagenet"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.path);
    CAPTURE(c.hint);
    CHECK(pvc_for_path(p, c.path, c.hint) == c.claim);
  }
  CHECK(pvc_for_path(json::object(), "/data") == std::nullopt);
}

TEST_CASE("RFC 3339 times") {
  auto t = std::chrono::system_clock::time_point(std::chrono::microseconds(1767323045123456LL));
  CHECK(rfc3339_micro(t) == "2026-01-02T03:04:05.123456Z");
  CHECK(rfc3339_seconds(t) == "2026-01-02T03:04:05Z");
  CHECK(rfc3339_micro(std::chrono::system_clock::time_point{}) == "1970-01-01T00:00:00.000000Z");
}

TEST_CASE("node_gpu_count: the device plugins' capacity, else GPU Feature Discovery's label") {
  auto count = [](const char* text) { return node_gpu_count(json::parse(text)); };
  NodeGpus both = count(R"({"status":{"capacity":{"cpu":"64","nvidia.com/gpu":"8","amd.com/gpu":2}}})");
  CHECK(both.count == 10);
  CHECK(both.from == "status.capacity");
  NodeGpus alloc = count(R"({"status":{"allocatable":{"nvidia.com/gpu":"4"}}})");
  CHECK(alloc.count == 4);
  CHECK(alloc.from == "status.allocatable");
  NodeGpus gfd = count(R"({"metadata":{"labels":{"nvidia.com/gpu.count":"8"}},"status":{"capacity":{"cpu":"64"}}})");
  CHECK(gfd.count == 8);
  CHECK(gfd.from == "label nvidia.com/gpu.count");
  NodeGpus zero =
      count(R"({"status":{"capacity":{"nvidia.com/gpu":"0"}},"metadata":{"labels":{"nvidia.com/gpu.count":"8"}}})");
  CHECK(zero.count == 0);  // the device plugin's word wins: no GPU is schedulable
  NodeGpus none = count(R"({"metadata":{"name":"cpu-1"}})");
  CHECK(none.count == 0);
  CHECK(none.from == "none");
  CHECK(count(R"({"status":{"capacity":{"nvidia.com/gpu":"lots"}}})").count == 0);
}

}  // namespace
TEST_CASE("resource lists read as kubectl's --requests and --limits wrote them") {
  auto ok = parse_resource_list("cpu=500m,memory=256Mi,ephemeral-storage=1e9,nvidia.com/gpu=1", "--preflight-limits");
  REQUIRE(ok.ok());
  CHECK(*ok == std::map<std::string, std::string>{
                   {"cpu", "500m"}, {"memory", "256Mi"}, {"ephemeral-storage", "1e9"}, {"nvidia.com/gpu", "1"}});
  CHECK(parse_resource_list("cpu=0.5", "--x").ok());
  CHECK(parse_resource_list("memory=1.5Gi", "--x").ok());
  auto message = [](const char* text) {
    auto r = parse_resource_list(text, "--preflight-limits");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::kUsage);
    return r.error().message;
  };
  CHECK(message("cpu") ==
        "--preflight-limits: expected NAME=QUANTITY[,NAME=QUANTITY...] like cpu=500m,memory=256Mi, got \"cpu\"");
  CHECK(message("cpu=1,,memory=1Gi").find("got \"\"") != std::string::npos);
  CHECK(message("memory=256MB") ==
        "--preflight-limits: memory: \"256MB\" is not a quantity (like 500m, 1, 256Mi or 1G)");
  for (const char* bad : {"cpu=", "cpu=-1", "cpu=.", "cpu=1e", "cpu=1.2.3", "cpu=1 m", "=1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_resource_list(bad, "--x").ok());
  }
  CHECK(message("cpu=1,cpu=2") == "--preflight-limits: cpu given twice");
}

}  // namespace iogate
