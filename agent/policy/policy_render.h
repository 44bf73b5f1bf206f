// A loaded policy shown back to its author: what `iogate policy check` prints, with every
// default filled in and the per-GPU floors resolved, so the user sees what will be enforced.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "policy/policy.h"

namespace iogate {

// `gpus`: resolve per-GPU floors for that many GPUs; without, floors are shown as formulas and
// the JSON has "gpus": null and no effective_* keys.
nlohmann::json policy_to_json(const Policy& p, std::optional<int> gpus);
// The node section alone, as the node agent's report shows it.
nlohmann::json node_settings_json(const NodeSettings& n);
std::string render_policy_human(const Policy& p, std::optional<int> gpus);

}  // namespace iogate
