#include "webhook/node_affinity.h"

#include <algorithm>

#include <fmt/format.h>

#include "webhook/json_patch.h"

namespace iogate {
namespace {

constexpr const char* kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
constexpr const char* kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";

// object[key] when present and not null; nullptr when absent or null (the API treats both as
// unset); an error naming `where` when it has another type than wanted.
Result<const nlohmann::json*> member(const nlohmann::json& object, const char* key, nlohmann::json::value_t wanted,
                                     const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return static_cast<const nlohmann::json*>(nullptr);
  if (it->type() != wanted) {
    return usage_error(fmt::format("{}.{} is a {}, not {}", where, key, it->type_name(),
                                   wanted == nlohmann::json::value_t::array ? "an array" : "an object"));
  }
  return &*it;
}

constexpr auto kObject = nlohmann::json::value_t::object;
constexpr auto kArray = nlohmann::json::value_t::array;

// The pod's spec.affinity.nodeAffinity, descending as far as it exists. `ops` gets the add of the
// first missing level (built by `fill` from what the missing level must hold), and `out` is
// nullptr then; otherwise `out` is the nodeAffinity object.
Status node_affinity(const nlohmann::json& pod, const nlohmann::json& node_affinity_content, nlohmann::json& ops,
                     const nlohmann::json*& out) {
  out = nullptr;
  if (!pod.is_object()) return usage_error("the pod is not an object");
  auto spec = member(pod, "spec", kObject, "pod");
  if (!spec) return spec.error();
  if (*spec == nullptr) return usage_error("the pod has no spec");
  auto affinity = member(**spec, "affinity", kObject, "spec");
  if (!affinity) return affinity.error();
  if (*affinity == nullptr) {
    ops.push_back(patch_add(pointer({"spec", "affinity"}), {{"nodeAffinity", node_affinity_content}}));
    return ok_status();
  }
  auto node = member(**affinity, "nodeAffinity", kObject, "spec.affinity");
  if (!node) return node.error();
  if (*node == nullptr) {
    ops.push_back(patch_add(pointer({"spec", "affinity", "nodeAffinity"}), node_affinity_content));
    return ok_status();
  }
  out = *node;
  return ok_status();
}

bool has_requirement(const nlohmann::json& expressions, const nlohmann::json& wanted) {
  return std::any_of(expressions.begin(), expressions.end(),
                     [&](const nlohmann::json& e) { return same_requirement(e, wanted); });
}

bool holds_alternative(const nlohmann::json& expressions, const nlohmann::json& alternative) {
  return std::all_of(alternative.begin(), alternative.end(),
                     [&](const nlohmann::json& e) { return has_requirement(expressions, e); });
}

// The pod's terms with the alternatives ANDed in (the header says how).
Result<nlohmann::json> merged_terms(const nlohmann::json& terms, const std::vector<nlohmann::json>& alternatives) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < terms.size(); ++i) {
    if (out.size() + alternatives.size() > kMaxNodeSelectorTerms) {
      return usage_error(fmt::format("{} nodeSelectorTerms, each crossed with {} alternative{}, would be more than {}",
                                     terms.size(), alternatives.size(), alternatives.size() == 1 ? "" : "s",
                                     kMaxNodeSelectorTerms));
    }
    const nlohmann::json& term = terms[i];
    std::string where = fmt::format("nodeSelectorTerms[{}]", i);
    if (!term.is_object()) return usage_error(fmt::format("{} is a {}, not an object", where, term.type_name()));
    auto expressions = member(term, "matchExpressions", kArray, where);
    if (!expressions) return expressions.error();
    auto fields = member(term, "matchFields", kArray, where);
    if (!fields) return fields.error();
    static const nlohmann::json none = nlohmann::json::array();
    const nlohmann::json& have = *expressions ? **expressions : none;
    bool matches_nothing = have.empty() && (*fields == nullptr || (*fields)->empty());
    bool done = std::any_of(alternatives.begin(), alternatives.end(),
                            [&](const nlohmann::json& a) { return holds_alternative(have, a); });
    if (matches_nothing || done) {
      out.push_back(term);
      continue;
    }
    for (const nlohmann::json& alternative : alternatives) {
      nlohmann::json merged = have;
      for (const nlohmann::json& e : alternative) {
        if (!has_requirement(merged, e)) merged.push_back(e);
      }
      nlohmann::json t = term;
      t["matchExpressions"] = std::move(merged);
      out.push_back(std::move(t));
    }
  }
  return out;
}

nlohmann::json terms_of(const std::vector<nlohmann::json>& alternatives) {
  nlohmann::json terms = nlohmann::json::array();
  for (const nlohmann::json& a : alternatives) terms.push_back({{"matchExpressions", a}});
  return terms;
}

// Values as a sorted list: In [a, b] equals In [b, a]. Absent and null are an empty list.
nlohmann::json value_set(const nlohmann::json& requirement) {
  auto it = requirement.find("values");
  if (it == requirement.end() || it->is_null()) return nlohmann::json::array();
  if (!it->is_array()) return *it;
  std::vector<nlohmann::json> values(it->begin(), it->end());
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace

bool same_requirement(const nlohmann::json& a, const nlohmann::json& b) {
  if (!a.is_object() || !b.is_object()) return false;
  auto field = [](const nlohmann::json& o, const char* key) {
    auto it = o.find(key);
    return it == o.end() ? nlohmann::json() : *it;
  };
  return field(a, "key") == field(b, "key") && field(a, "operator") == field(b, "operator") &&
         value_set(a) == value_set(b);
}

Status add_required_affinity(const nlohmann::json& pod, const std::vector<nlohmann::json>& alternatives,
                             nlohmann::json& ops) {
  if (alternatives.empty()) return ok_status();
  nlohmann::json required = {{"nodeSelectorTerms", terms_of(alternatives)}};
  const nlohmann::json* node = nullptr;
  if (Status s = node_affinity(pod, {{kRequired, required}}, ops, node); !s) return s;
  if (node == nullptr) return ok_status();

  auto existing = member(*node, kRequired, kObject, "spec.affinity.nodeAffinity");
  if (!existing) return existing.error();
  if (*existing == nullptr) {
    ops.push_back(patch_add(pointer({"spec", "affinity", "nodeAffinity", kRequired}), required));
    return ok_status();
  }
  std::string terms_path = pointer({"spec", "affinity", "nodeAffinity", kRequired, "nodeSelectorTerms"});
  auto terms = member(**existing, "nodeSelectorTerms", kArray, std::string("spec.affinity.nodeAffinity.") + kRequired);
  if (!terms) return terms.error();
  // No terms at all would match no node (the API refuses it anyway): ours become the terms.
  if (*terms == nullptr || (*terms)->empty()) {
    ops.push_back(patch_add(terms_path, terms_of(alternatives)));
    return ok_status();
  }
  auto merged = merged_terms(**terms, alternatives);
  if (!merged) return merged.error();
  if (*merged != **terms) ops.push_back(patch_replace(terms_path, std::move(*merged)));
  return ok_status();
}

Status add_preferred_affinity(const nlohmann::json& pod, const std::vector<nlohmann::json>& alternatives, int weight,
                              nlohmann::json& ops) {
  if (alternatives.empty()) return ok_status();
  nlohmann::json ours = nlohmann::json::array();
  for (const nlohmann::json& a : alternatives)
    ours.push_back({{"weight", weight}, {"preference", {{"matchExpressions", a}}}});
  const nlohmann::json* node = nullptr;
  if (Status s = node_affinity(pod, {{kPreferred, ours}}, ops, node); !s) return s;
  if (node == nullptr) return ok_status();

  std::string path = pointer({"spec", "affinity", "nodeAffinity", kPreferred});
  auto existing = member(*node, kPreferred, kArray, "spec.affinity.nodeAffinity");
  if (!existing) return existing.error();
  if (*existing == nullptr) {
    ops.push_back(patch_add(path, ours));
    return ok_status();
  }
  for (size_t i = 0; i < alternatives.size(); ++i) {
    bool present = std::any_of((*existing)->begin(), (*existing)->end(), [&](const nlohmann::json& term) {
      if (!term.is_object()) return false;
      auto preference = term.find("preference");
      if (preference == term.end() || !preference->is_object()) return false;
      auto expressions = preference->find("matchExpressions");
      return expressions != preference->end() && expressions->is_array() &&
             holds_alternative(*expressions, alternatives[i]);
    });
    if (!present) ops.push_back(patch_add(path + "/-", ours[i]));
  }
  return ok_status();
}

}  // namespace iogate
