// Reading a YAML document field by field, each error naming where the user has to look: the
// field's path ("rules[0].selector.paths", "users[admin].user.exec"), what was expected and what
// is there. The policy (policy/policy_parse.cc) and kubeconfig files (kube/kubeconfig_file.cc)
// are read with it; each puts its own prefix (a file's path) before the field's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"

namespace iogate {

using FieldKeys = std::vector<std::string_view>;

// `path`.`key`, or `key` at the top (`path` ""). A key is the user's text too: one that is not
// letters, digits, '_' and '-', or is long, is quoted and cut to size: path["a b"].
std::string field_child(const std::string& path, std::string_view key);
std::string field_element(const std::string& path, size_t i);  // "path[i]"

// Absent or null: how a field left out, or written with no value, reads.
bool yaml_absent(const YAML::Node& n);

// What the user wrote, for "got ...": "nothing", a quoted scalar, "a list", "a map".
std::string describe_yaml(const YAML::Node& n);
// "PATH: expected WHAT, got ...", a usage error.
Error yaml_expected(const std::string& path, std::string_view what, const YAML::Node& n);

// "did you mean" candidates for `word`: those that have it as a '-', '_' or '.'-separated part
// ("ssd" → "sas-ssd" or "sata-ssd"), else the nearest by edit distance if near enough; "" when
// nothing is.
std::string closest_names(std::string_view word, const FieldKeys& candidates);
std::string join_names(const FieldKeys& names);  // "a, b, c"

// A map node whose kind and keys read_yaml_map has checked: the one way a reader looks up a field.
// yaml-cpp throws BadSubscript when a scalar is subscripted (`workload: 5` once aborted every
// mode); a reader holding YamlMap can subscript nothing but a map.
class YamlMap {
 public:
  // The field's node; false (undefined) when absent.
  YAML::Node operator[](std::string_view key) const { return node_[std::string(key)]; }

 private:
  friend Result<YamlMap> read_yaml_map(const YAML::Node& n, const std::string& path, const FieldKeys& known,
                                       std::string_view document);
  explicit YamlMap(const YAML::Node& node) : node_(node) {}
  YAML::Node node_;
};

// A map whose keys are all `known` (else "unknown key", with "did you mean" or the known keys) and
// appear once. `path` "" is the document itself, named `document` in errors.
Result<YamlMap> read_yaml_map(const YAML::Node& n, const std::string& path, const FieldKeys& known,
                              std::string_view document);

// Scalars, each "expected ..." otherwise.
Result<std::string> read_yaml_string(const YAML::Node& n, const std::string& path);  // non-empty
Result<uint64_t> read_yaml_positive(const YAML::Node& n, const std::string& path);   // an integer > 0
Result<int64_t> read_yaml_integer(const YAML::Node& n, const std::string& path, int64_t min, int64_t max);
Result<bool> read_yaml_bool(const YAML::Node& n, const std::string& path);  // true, True, false, False

}  // namespace iogate
