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

// One of the pod's required terms, read: its expressions (an empty array when it has none), and
// whether it gets the alternatives (it matches some node and holds none of them yet).
struct TermView {
  const nlohmann::json* expressions = nullptr;
  bool has_expressions = false;  // matchExpressions present and not null
  bool crossed = false;
};

Result<TermView> view_term(const nlohmann::json& term, size_t i, const std::vector<nlohmann::json>& alternatives) {
  static const nlohmann::json none = nlohmann::json::array();
  std::string where = fmt::format("nodeSelectorTerms[{}]", i);
  if (!term.is_object()) return usage_error(fmt::format("{} is a {}, not an object", where, term.type_name()));
  auto expressions = member(term, "matchExpressions", kArray, where);
  if (!expressions) return expressions.error();
  auto fields = member(term, "matchFields", kArray, where);
  if (!fields) return fields.error();
  TermView v;
  v.has_expressions = *expressions != nullptr;
  v.expressions = v.has_expressions ? *expressions : &none;
  bool matches_nothing = v.expressions->empty() && (*fields == nullptr || (*fields)->empty());
  bool done = std::any_of(alternatives.begin(), alternatives.end(),
                          [&](const nlohmann::json& a) { return holds_alternative(*v.expressions, a); });
  v.crossed = !matches_nothing && !done;
  return v;
}

// The operations that put `alternative`'s expressions the term lacks into the term at `path`
// (which holds what `term` says).
void extend_term(const TermView& term, const std::string& path, const nlohmann::json& alternative,
                 nlohmann::json& ops) {
  nlohmann::json missing = nlohmann::json::array();
  for (const nlohmann::json& e : alternative) {
    if (!has_requirement(*term.expressions, e) && !has_requirement(missing, e)) missing.push_back(e);
  }
  if (!term.has_expressions) {
    ops.push_back(patch_add(path + "/matchExpressions", std::move(missing)));
    return;
  }
  for (nlohmann::json& e : missing) ops.push_back(patch_add(path + "/matchExpressions/-", std::move(e)));
}

// The operations that AND the alternatives into the pod's terms (the header says how), and the
// bytes their copies repeat. Terms are worked from the last to the first, so that the copies
// inserted after a term move only terms already done.
Result<size_t> cross_terms(const nlohmann::json& terms, const std::vector<nlohmann::json>& alternatives,
                           const std::string& terms_path, nlohmann::json& ops) {
  std::vector<TermView> views;
  size_t after = 0;  // terms once crossed
  for (size_t i = 0; i < terms.size(); ++i) {
    auto v = view_term(terms[i], i, alternatives);
    if (!v) return v.error();
    after += v->crossed ? alternatives.size() : 1;
    if (after > kMaxNodeSelectorTerms) {
      return usage_error(fmt::format("{} nodeSelectorTerms, each crossed with {} alternative{}, would be more than {}",
                                     terms.size(), alternatives.size(), alternatives.size() == 1 ? "" : "s",
                                     kMaxNodeSelectorTerms));
    }
    views.push_back(*v);
  }
  size_t copied = 0;
  for (size_t i = views.size(); i-- > 0;) {
    if (!views[i].crossed) continue;
    std::string path = fmt::format("{}/{}", terms_path, i);
    std::string next = fmt::format("{}/{}", terms_path, i + 1);
    // Inserted at i + 1 from the last alternative to the second, they end in the alternatives' order.
    for (size_t a = alternatives.size(); a-- > 1;) {
      ops.push_back(patch_copy(path, next));
      extend_term(views[i], next, alternatives[a], ops);
      copied += json_text_bytes(terms[i]);
    }
    extend_term(views[i], path, alternatives[0], ops);
  }
  return copied;
}

nlohmann::json terms_of(const std::vector<nlohmann::json>& alternatives) {
  nlohmann::json terms = nlohmann::json::array();
  for (const nlohmann::json& a : alternatives) terms.push_back({{"matchExpressions", a}});
  return terms;
}

// A member of a requirement, or null when absent.
const nlohmann::json& field(const nlohmann::json& requirement, const char* key) {
  static const nlohmann::json null;
  auto it = requirement.find(key);
  return it == requirement.end() ? null : *it;
}

// Whether every element of `a` is in `b`.
bool within(const nlohmann::json& a, const nlohmann::json& b) {
  return std::all_of(a.begin(), a.end(),
                     [&](const nlohmann::json& v) { return std::find(b.begin(), b.end(), v) != b.end(); });
}

}  // namespace

bool same_requirement(const nlohmann::json& a, const nlohmann::json& b) {
  if (!a.is_object() || !b.is_object()) return false;
  if (field(a, "key") != field(b, "key") || field(a, "operator") != field(b, "operator")) return false;
  // Values as a set: In [a, b] equals In [b, a]. Absent and null are an empty list.
  const nlohmann::json& x = field(a, "values");
  const nlohmann::json& y = field(b, "values");
  bool x_list = x.is_array() || x.is_null(), y_list = y.is_array() || y.is_null();
  if (!x_list || !y_list) return x == y;
  return within(x, y) && within(y, x);
}

Result<size_t> add_required_affinity(const nlohmann::json& pod, const std::vector<nlohmann::json>& alternatives,
                                     nlohmann::json& ops) {
  if (alternatives.empty()) return size_t{0};
  nlohmann::json required = {{"nodeSelectorTerms", terms_of(alternatives)}};
  const nlohmann::json* node = nullptr;
  if (Status s = node_affinity(pod, {{kRequired, required}}, ops, node); !s) return s.error();
  if (node == nullptr) return size_t{0};

  auto existing = member(*node, kRequired, kObject, "spec.affinity.nodeAffinity");
  if (!existing) return existing.error();
  if (*existing == nullptr) {
    ops.push_back(patch_add(pointer({"spec", "affinity", "nodeAffinity", kRequired}), required));
    return size_t{0};
  }
  std::string terms_path = pointer({"spec", "affinity", "nodeAffinity", kRequired, "nodeSelectorTerms"});
  auto terms = member(**existing, "nodeSelectorTerms", kArray, std::string("spec.affinity.nodeAffinity.") + kRequired);
  if (!terms) return terms.error();
  // No terms at all would match no node (the API refuses it anyway): ours become the terms.
  if (*terms == nullptr || (*terms)->empty()) {
    ops.push_back(patch_add(terms_path, terms_of(alternatives)));
    return size_t{0};
  }
  return cross_terms(**terms, alternatives, terms_path, ops);
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
