// examples/policy.yaml, the manual's example policy, as the unit tests judge with it; `mode`
// replaces its enforce mode.
#pragma once

#include <string>
#include <string_view>

#include "source_tree.h"

namespace iogate::testing {

inline std::string example_policy_text(std::string_view mode = "enforce") {
  std::string text = read_source_file("examples/policy.yaml");
  const std::string enforce = "\nmode: enforce\n";
  size_t at = text.find(enforce);
  if (at == std::string::npos) throw std::runtime_error("examples/policy.yaml: no \"mode: enforce\" line");
  return text.replace(at, enforce.size(), "\nmode: " + std::string(mode) + "\n");
}

}  // namespace iogate::testing
