// Node requirements (node_requirements.h) merged into a pod's own node affinity, as JSON patch
// operations that keep everything the pod has.
//
// Required terms are ORed and a term's expressions ANDed, so every term must carry the
// requirements: term T becomes T plus alternative A's expressions (T ∧ A), one term per
// alternative when there are several ((T1 ∨ T2) ∧ (A1 ∨ A2) = T1A1 ∨ T1A2 ∨ T2A1 ∨ T2A2, in that
// order). A term with neither matchExpressions nor matchFields matches no node; adding to it would
// make it match, so it stays as it is. A term that already holds every expression of one
// alternative is left alone, which makes a second call (reinvocationPolicy IfNeeded) add nothing.
// Expressions are equal when key, operator and the set of values are.
//
// Nothing of the pod is copied here, whatever its size (a pod's affinity may be most of its 3 MiB):
// T is extended in place ("add" to its matchExpressions), and each further alternative gets a
// "copy" of T, inserted after it before T is extended, which the API server applies. The patch is
// then a few operations per term, and what the copies add to the pod is measured (without
// writing it) for the caller to bound.
//
// The pod object comes from a request, so fields may have any type: a mistyped one on the way
// (spec.affinity a string) is an error rather than a patch the API server could not apply.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace iogate {

// Crossing terms with alternatives multiplies them; a pod with more terms than this after the
// merge is refused rather than answered with a patch of thousands of operations (real pods have a
// few terms).
inline constexpr size_t kMaxNodeSelectorTerms = 256;

// Appends to `ops` what puts `alternatives` into requiredDuringSchedulingIgnoredDuringExecution,
// and says how many bytes of the pod's JSON its copy operations repeat (0 for one alternative).
Result<size_t> add_required_affinity(const nlohmann::json& pod, const std::vector<nlohmann::json>& alternatives,
                                     nlohmann::json& ops);

// Appends to `ops` one preferredDuringSchedulingIgnoredDuringExecution term of `weight` per
// alternative that no preferred term holds yet.
Status add_preferred_affinity(const nlohmann::json& pod, const std::vector<nlohmann::json>& alternatives, int weight,
                              nlohmann::json& ops);

// Whether two nodeSelectorRequirements say the same: key, operator, and values as a set. Nothing
// is copied; comparing values takes the product of the two lists' lengths, and one of them is
// always iogate's own (a few values).
bool same_requirement(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace iogate
