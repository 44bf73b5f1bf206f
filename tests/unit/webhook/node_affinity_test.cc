#include <doctest/doctest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "webhook/node_affinity.h"

namespace iogate {
namespace {

using nlohmann::json;

json expr(const std::string& key, const std::string& op, json values) {
  return {{"key", key}, {"operator", op}, {"values", values}};
}

TEST_CASE("node affinity: requirements compare as sets") {
  json values = json::array();
  for (int i = 0; i < 1000; ++i) values.push_back(fmt::format("v{}", i));
  json reversed = json::array();
  for (auto it = values.rbegin(); it != values.rend(); ++it) reversed.push_back(*it);
  reversed.push_back("v7");  // a repeated value changes no set
  CHECK(same_requirement(expr("k", "In", values), expr("k", "In", reversed)));
  CHECK_FALSE(same_requirement(expr("k", "In", values), expr("k", "NotIn", values)));
  CHECK_FALSE(same_requirement(expr("k", "In", values), expr("j", "In", values)));
  json fewer = values;
  fewer.erase(fewer.begin());
  CHECK_FALSE(same_requirement(expr("k", "In", values), expr("k", "In", fewer)));
  CHECK_FALSE(same_requirement(expr("k", "In", fewer), expr("k", "In", values)));
  // Absent and null values are an empty list; a mistyped list equals only itself.
  json exists = {{"key", "k"}, {"operator", "Exists"}};
  CHECK(same_requirement(exists, expr("k", "Exists", nullptr)));
  CHECK(same_requirement(exists, expr("k", "Exists", json::array())));
  CHECK_FALSE(same_requirement(expr("k", "In", "a"), expr("k", "In", {"a"})));
  CHECK(same_requirement(expr("k", "In", "a"), expr("k", "In", "a")));
  CHECK_FALSE(same_requirement(json::array(), json::array()));
}

}  // namespace
}  // namespace iogate
