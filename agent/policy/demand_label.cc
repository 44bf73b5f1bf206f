#include "policy/demand_label.h"

#include <cctype>

namespace iogate {

std::string accelerators_label(std::string_view rule) {
  return std::string(kAcceleratorsLabelPrefix) + std::string(rule);
}

bool demand_rule_name_fits_label(std::string_view rule) {
  return !rule.empty() && rule.size() <= kMaxDemandRuleName && std::isalnum(static_cast<unsigned char>(rule.back()));
}

std::string_view accelerators_label_rule(std::string_view key) {
  if (key.size() <= kAcceleratorsLabelPrefix.size() ||
      key.substr(0, kAcceleratorsLabelPrefix.size()) != kAcceleratorsLabelPrefix)
    return {};
  return key.substr(kAcceleratorsLabelPrefix.size());
}

}  // namespace iogate
