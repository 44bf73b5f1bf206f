// Patch semantics: RFC 7386 merge patch (the RFC's own examples), strategic merge patch list
// strategies for the fields iogate touches, RFC 6902 JSON patch, and the error codes of each.
#include <doctest/doctest.h>

#include "patch.h"

using nlohmann::json;
using namespace iogate::apiserver;

namespace {

json merge(const char* target, const char* patch) { return merge_patch(json::parse(target), json::parse(patch)); }

json smp(const std::string& kind, const json& original, const json& patch) {
  auto out = strategic_merge_patch(kind, original, patch);
  REQUIRE(out.ok());
  return out.value();
}

}  // namespace

TEST_CASE("merge patch: the examples of RFC 7386 appendix A") {
  CHECK(merge(R"({"a":"b"})", R"({"a":"c"})") == json::parse(R"({"a":"c"})"));
  CHECK(merge(R"({"a":"b"})", R"({"b":"c"})") == json::parse(R"({"a":"b","b":"c"})"));
  CHECK(merge(R"({"a":"b"})", R"({"a":null})") == json::parse(R"({})"));
  CHECK(merge(R"({"a":"b","b":"c"})", R"({"a":null})") == json::parse(R"({"b":"c"})"));
  CHECK(merge(R"({"a":["b"]})", R"({"a":"c"})") == json::parse(R"({"a":"c"})"));
  CHECK(merge(R"({"a":"c"})", R"({"a":["b"]})") == json::parse(R"({"a":["b"]})"));
  CHECK(merge(R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})") == json::parse(R"({"a":{"b":"d"}})"));
  CHECK(merge(R"({"a":[{"b":"c"}]})", R"({"a":[1]})") == json::parse(R"({"a":[1]})"));
  CHECK(merge(R"(["a","b"])", R"(["c","d"])") == json::parse(R"(["c","d"])"));
  CHECK(merge(R"({"a":"b"})", R"(["c"])") == json::parse(R"(["c"])"));
  CHECK(merge(R"({"a":"foo"})", "null") == json());
  CHECK(merge(R"({"a":"foo"})", R"("bar")") == json("bar"));
  CHECK(merge(R"({"e":null})", R"({"a":1})") == json::parse(R"({"e":null,"a":1})"));
  CHECK(merge(R"([1,2])", R"({"a":"b","c":null})") == json::parse(R"({"a":"b"})"));
  CHECK(merge(R"({})", R"({"a":{"bb":{"ccc":null}}})") == json::parse(R"({"a":{"bb":{}}})"));
}

TEST_CASE("merge patch replaces a list whole: a merge patch of node conditions wipes the others") {
  json node = json::parse(R"({"status":{"conditions":[{"type":"Ready","status":"True"}]}})");
  auto out = apply_patch(PatchType::kMerge, "Node", node,
                         R"({"status":{"conditions":[{"type":"StorageBelowPolicy","status":"True"}]}})");
  REQUIRE(out.ok());
  CHECK(out.value()["status"]["conditions"].size() == 1);
  CHECK(out.value()["status"]["conditions"][0]["type"] == "StorageBelowPolicy");
}

TEST_CASE("strategic merge: node status.conditions merge by type") {
  json node = json::parse(R"({"status":{"conditions":[
      {"type":"Ready","status":"True","reason":"KubeletReady"},
      {"type":"DiskPressure","status":"False"}]}})");
  json out = smp("Node", node, json::parse(R"({"status":{"conditions":[
      {"type":"StorageBelowPolicy","status":"True","reason":"Slow"},
      {"type":"DiskPressure","status":"True"}]}})"));
  auto conditions = out["status"]["conditions"];
  REQUIRE(conditions.size() == 3);
  CHECK(conditions[0] == json::parse(R"({"type":"Ready","status":"True","reason":"KubeletReady"})"));
  CHECK(conditions[1]["status"] == "True");  // DiskPressure updated in place
  CHECK(conditions[2]["type"] == "StorageBelowPolicy");
}

TEST_CASE("strategic merge: node spec.taints is atomic, the patch's list replaces the whole list") {
  json node = json::parse(R"({"spec":{"taints":[{"key":"other.io/x","effect":"NoSchedule"}]}})");
  json out = smp(
      "Node", node,
      json::parse(
          R"({"spec":{"taints":[{"key":"iogate.io/storage-below-policy","value":"true","effect":"NoSchedule"}]}})"));
  REQUIRE(out["spec"]["taints"].size() == 1);
  CHECK(out["spec"]["taints"][0]["key"] == "iogate.io/storage-below-policy");
  out = smp("Node", node, json::parse(R"({"spec":{"taints":null}})"));
  CHECK_FALSE(out["spec"].contains("taints"));
}

TEST_CASE("strategic merge: pod containers merge by name, their env by name, null deletes a key") {
  json pod = json::parse(R"({"metadata":{"name":"p1","labels":{"a":"1","b":"2"}},
      "spec":{"containers":[{"name":"train","image":"t:1","env":[{"name":"A","value":"1"}]},
                            {"name":"side","image":"s:1"}],
              "tolerations":[{"key":"k1"}]}})");
  json out = smp("Pod", pod, json::parse(R"({"metadata":{"labels":{"a":null,"c":"3"}},
      "spec":{"containers":[{"name":"train","image":"t:2","env":[{"name":"B","value":"2"}]}],
              "tolerations":[{"key":"k2"}]}})"));
  CHECK(out["metadata"]["labels"] == json::parse(R"({"b":"2","c":"3"})"));
  auto containers = out["spec"]["containers"];
  REQUIRE(containers.size() == 2);
  CHECK(containers[0]["image"] == "t:2");
  CHECK(containers[0]["env"].size() == 2);
  CHECK(containers[1]["name"] == "side");
  CHECK(out["spec"]["tolerations"] == json::parse(R"([{"key":"k2"}])"));  // atomic
}

TEST_CASE("strategic merge: initContainers by name, ownerReferences by uid, finalizers as a set") {
  json pod = json::parse(R"({"metadata":{"ownerReferences":[{"uid":"u1","name":"job"}],"finalizers":["a"]},
      "spec":{"initContainers":[{"name":"iogate","image":"i:1"}]}})");
  json out = smp("Pod", pod, json::parse(R"({"metadata":{"ownerReferences":[{"uid":"u2","name":"rs"}],
      "finalizers":["b","a"]},"spec":{"initContainers":[{"name":"iogate","args":["preflight"]}]}})"));
  CHECK(out["metadata"]["ownerReferences"].size() == 2);
  CHECK(out["metadata"]["finalizers"] == json::parse(R"(["a","b"])"));
  CHECK(out["spec"]["initContainers"][0] == json::parse(R"({"name":"iogate","image":"i:1","args":["preflight"]})"));
}

TEST_CASE("strategic merge directives: $patch delete in a keyed list, $setElementOrder, $deleteFromPrimitiveList") {
  json node =
      json::parse(R"({"metadata":{"finalizers":["a","b"]},"status":{"conditions":[{"type":"A"},{"type":"B"}]}})");
  json out = smp("Node", node, json::parse(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]},
      "status":{"$setElementOrder/conditions":[{"type":"B"},{"type":"A"}],
                "conditions":[{"type":"A","$patch":"delete"}]}})"));
  CHECK(out["metadata"]["finalizers"] == json::parse(R"(["b"])"));
  CHECK(out["status"]["conditions"] == json::parse(R"([{"type":"B"}])"));
  out = smp("Node", node, json::parse(R"({"status":{"$setElementOrder/conditions":[{"type":"B"},{"type":"A"}]}})"));
  CHECK(out["status"]["conditions"] == json::parse(R"([{"type":"B"},{"type":"A"}])"));
}

TEST_CASE("strategic merge: a keyed list item without its merge key is a 500, as in Go") {
  auto out =
      strategic_merge_patch("Node", json::object(), json::parse(R"({"status":{"conditions":[{"status":"True"}]}})"));
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().code == 500);
  CHECK(out.error().message.find("does not contain declared merge key: type") != std::string::npos);
}

TEST_CASE("json patch: RFC 6902 operations, and a failed test op is 422") {
  json node = json::parse(R"({"metadata":{"labels":{"a":"1"}}})");
  auto out = apply_patch(PatchType::kJson, "Node", node,
                         R"([{"op":"add","path":"/metadata/labels/iogate.io~1tier","value":"fast"},
                             {"op":"remove","path":"/metadata/labels/a"}])");
  REQUIRE(out.ok());
  CHECK(out.value()["metadata"]["labels"] == json::parse(R"({"iogate.io/tier":"fast"})"));
  auto failed =
      apply_patch(PatchType::kJson, "Node", node, R"([{"op":"test","path":"/metadata/labels/a","value":"2"}])");
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == 422);
  auto not_array = apply_patch(PatchType::kJson, "Node", node, R"({"op":"add"})");
  REQUIRE_FALSE(not_array.ok());
  CHECK(not_array.error().code == 400);
}

TEST_CASE("patch types from Content-Type, parameters ignored; bodies that are not JSON are 400") {
  CHECK(patch_type_from_content_type("application/merge-patch+json") == PatchType::kMerge);
  CHECK(patch_type_from_content_type("application/strategic-merge-patch+json; charset=utf-8") ==
        PatchType::kStrategicMerge);
  CHECK(patch_type_from_content_type("application/json-patch+json") == PatchType::kJson);
  CHECK_FALSE(patch_type_from_content_type("application/json").has_value());
  CHECK_FALSE(patch_type_from_content_type("application/apply-patch+yaml").has_value());
  auto bad = apply_patch(PatchType::kMerge, "Pod", json::object(), "{not json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == 400);
}
