#include "base/yaml_fields.h"

#include <doctest/doctest.h>

using namespace iogate;

TEST_CASE("field paths: keys joined with '.', elements indexed, odd keys quoted") {
  CHECK(field_child("", "rules") == "rules");
  CHECK(field_child("rules[0]", "selector") == "rules[0].selector");
  CHECK(field_child(field_element("rules", 2), "min_iops") == "rules[2].min_iops");
  CHECK(field_child("metadata.labels", "a b") == "metadata.labels[\"a b\"]");
  CHECK(field_child("users[admin].user", "client-key-data") == "users[admin].user.client-key-data");
}

TEST_CASE("a map's keys: unknown ones named with a guess or the known list, repeats refused") {
  const FieldKeys known = {"enabled", "tolerance", "confidence"};
  auto ok = read_yaml_map(YAML::Load("{enabled: true}"), "early_stop", known, "policy");
  REQUIRE(ok.ok());
  CHECK((*ok)["enabled"].Scalar() == "true");
  CHECK(!(*ok)["tolerance"]);
  CHECK(read_yaml_map(YAML::Load("{tolerence: 1}"), "early_stop", known, "policy").error().message ==
        "early_stop.tolerence: unknown key (did you mean \"tolerance\"?)");
  CHECK(read_yaml_map(YAML::Load("{zzz: 1}"), "early_stop", known, "policy").error().message ==
        "early_stop.zzz: unknown key (known: enabled, tolerance, confidence)");
  CHECK(read_yaml_map(YAML::Load("{enabled: 1, enabled: 2}"), "early_stop", known, "policy").error().message ==
        "early_stop.enabled: given twice");
  CHECK(read_yaml_map(YAML::Load("5"), "", known, "policy").error().message == "policy: expected a map, got \"5\"");
}

TEST_CASE("scalars: what was expected and what is there") {
  CHECK(read_yaml_bool(YAML::Load("[1]"), "webhook.allow_opt_out").error().message ==
        "webhook.allow_opt_out: expected true or false, got a list");
  CHECK(read_yaml_positive(YAML::Load("0"), "x").error().message == "x: expected a positive integer, got \"0\"");
  CHECK(*read_yaml_positive(YAML::Load("12"), "x") == 12);
  CHECK(read_yaml_string(YAML::Load("''"), "n").error().message == "n: expected a non-empty string, got \"\"");
  CHECK(yaml_absent(YAML::Load("{a: }")["a"]));
  CHECK(yaml_absent(YAML::Load("{a: 1}")["b"]));
  CHECK(!yaml_absent(YAML::Load("{a: 1}")["a"]));
}
