// The node label that carries one demand rule's answer: how many accelerators the node's best data
// path sustains at the rule's AU floor (policy/demand.h's accelerators_sustained). The node agent
// writes it, the webhook requires it (`Gt N-1` for a pod of N GPUs), the same name in both.
//
// One label per rule with a demand, never per sample size or path: `iogate.io/accelerators.<rule>`,
// a small integer, NFD's habit of a family and a qualifier (nvidia.com/gpu.count). A label's name
// part is at most 63 characters and ends in a letter or digit, so a demand rule's name is at most
// kMaxDemandRuleName of them and ends so too (the policy refuses others, naming the field).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace iogate {

inline constexpr std::string_view kAcceleratorsLabelPrefix = "iogate.io/accelerators.";
inline constexpr size_t kMaxDemandRuleName =
    63 - (kAcceleratorsLabelPrefix.size() - std::string_view("iogate.io/").size());

// "iogate.io/accelerators.feed-gpus".
std::string accelerators_label(std::string_view rule);
// Whether `rule` fits the label's name (a rule name is already letters, digits, '-', '_', '.').
bool demand_rule_name_fits_label(std::string_view rule);
// The rule a key of this family names; "" for any other key.
std::string_view accelerators_label_rule(std::string_view key);

}  // namespace iogate
