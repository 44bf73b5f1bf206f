#include "base/yaml_fields.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "base/quote.h"
#include "base/units.h"

namespace iogate {
namespace {

// `word` is one of the '-'/'_'-separated parts of `name`: "ssd" of "sata-ssd", "labels" of "pod_labels".
bool has_part(std::string_view name, std::string_view word) {
  auto separator = [](char c) { return c == '-' || c == '_' || c == '.'; };
  for (size_t at = name.find(word); at != std::string_view::npos; at = name.find(word, at + 1)) {
    size_t end = at + word.size();
    if ((at == 0 || separator(name[at - 1])) && (end == name.size() || separator(name[end]))) return true;
  }
  return false;
}

}  // namespace

std::string field_child(const std::string& path, std::string_view key) {
  bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  if (!plain || key.size() > kQuotedValueMax) return fmt::format("{}[{}]", path, quote_value(key));
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string field_element(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }

bool yaml_absent(const YAML::Node& n) { return !n || n.IsNull(); }

std::string describe_yaml(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsScalar()) return quote_value(n.Scalar());
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "something else";
}

Error yaml_expected(const std::string& path, std::string_view what, const YAML::Node& n) {
  return usage_error(fmt::format("{}: expected {}, got {}", path, what, describe_yaml(n)));
}

std::string closest_names(std::string_view word, const FieldKeys& candidates) {
  std::vector<std::string_view> found;
  if (word.size() >= 3) {
    for (std::string_view c : candidates) {
      if (c != word && has_part(c, word)) found.push_back(c);
    }
  }
  if (found.empty()) {
    size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
    for (std::string_view c : candidates) {
      // The distance is at least the difference in length: a 10 MB word is near nothing, and
      // measuring it against each candidate would take seconds.
      size_t gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
      if (gap >= best_distance) continue;
      size_t d = edit_distance(word, c);
      if (d < best_distance) {
        best_distance = d;
        found = {c};
      }
    }
  }
  std::string out;
  for (size_t i = 0; i < found.size(); ++i) {
    out += fmt::format("{}\"{}\"", i == 0 ? "" : (i + 1 == found.size() ? " or " : ", "), found[i]);
  }
  return out;
}

std::string join_names(const FieldKeys& names) {
  std::string out;
  for (std::string_view w : names) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

Result<YamlMap> read_yaml_map(const YAML::Node& n, const std::string& path, const FieldKeys& known,
                              std::string_view document) {
  const std::string where = path.empty() ? std::string(document) : path;
  if (!n.IsMap()) return yaml_expected(where, "a map", n);
  std::set<std::string> seen;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) return usage_error(fmt::format("{}: keys must be strings", where));
    const std::string& key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string hint = closest_names(key, known);
      return usage_error(fmt::format(
          "{}: unknown key{}", field_child(path, key),
          hint.empty() ? fmt::format(" (known: {})", join_names(known)) : fmt::format(" (did you mean {}?)", hint)));
    }
    if (!seen.insert(key).second) return usage_error(fmt::format("{}: given twice", field_child(path, key)));
  }
  return YamlMap(n);
}

Result<std::string> read_yaml_string(const YAML::Node& n, const std::string& path) {
  if (!n.IsScalar() || n.Scalar().empty()) return yaml_expected(path, "a non-empty string", n);
  return n.Scalar();
}

Result<uint64_t> read_yaml_positive(const YAML::Node& n, const std::string& path) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty() && v > 0) return v;
  }
  return yaml_expected(path, "a positive integer", n);
}

Result<int64_t> read_yaml_integer(const YAML::Node& n, const std::string& path, int64_t min, int64_t max) {
  if (!n.IsScalar()) return yaml_expected(path, "a whole number", n);
  return parse_integer(n.Scalar(), path, min, max);
}

Result<bool> read_yaml_bool(const YAML::Node& n, const std::string& path) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True") return true;
    if (s == "false" || s == "False") return false;
  }
  return yaml_expected(path, "true or false", n);
}

}  // namespace iogate
