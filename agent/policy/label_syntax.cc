#include "policy/label_syntax.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "base/quote.h"

namespace iogate {
namespace {

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]: a label value when not empty, and a key's name.
bool label_word(std::string_view s) {
  return !s.empty() && s.size() <= kLabelNameMax && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// RFC 1123 subdomain: dot-separated labels of [a-z0-9-], each starting and ending with [a-z0-9].
bool dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > kLabelPrefixMax) return false;
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  size_t begin = 0;
  while (begin <= s.size()) {
    size_t end = std::min(s.find('.', begin), s.size());
    std::string_view label = s.substr(begin, end - begin);
    if (label.empty() || !lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(), [&](char c) { return lower_alnum(c) || c == '-'; })) return false;
    begin = end + 1;
  }
  return true;
}

Status key_error(const std::string& path, std::string_view what, std::string_view why) {
  return usage_error(fmt::format("{}: not {}: {}", path, what, why));
}

Status check_qualified_name(std::string_view key, const std::string& path, std::string_view what) {
  std::string_view name = key;
  if (size_t slash = key.find('/'); slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (name.find('/') != std::string_view::npos) {
      return key_error(path, what, "at most one '/', between a DNS-subdomain prefix and the name");
    }
    if (!dns_subdomain(prefix)) {
      return key_error(path, what,
                       fmt::format("the prefix before '/' must be a lower-case DNS subdomain of at most {} characters "
                                   "(like example.com)",
                                   kLabelPrefixMax));
    }
  }
  if (name.empty()) return key_error(path, what, "the name is empty");
  if (name.size() > kLabelNameMax) {
    return key_error(path, what, fmt::format("the name is longer than {} characters", kLabelNameMax));
  }
  if (!label_word(name)) {
    return key_error(path, what,
                     "the name must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit");
  }
  return ok_status();
}

}  // namespace

Status check_label_key(std::string_view key, const std::string& path) {
  return check_qualified_name(key, path, "a label key");
}

Status check_annotation_key(std::string_view key, const std::string& path) {
  std::string lower(key);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; });
  return check_qualified_name(lower, path, "an annotation key");
}

Status check_label_value(std::string_view value, const std::string& path) {
  if (value.empty() || label_word(value)) return ok_status();
  return usage_error(fmt::format(
      "{}: expected a label value (empty, or at most {} letters, digits, '-', '_' or '.', starting and ending with a "
      "letter or digit), got {}",
      path, kLabelNameMax, quote_value(value)));
}

}  // namespace iogate
