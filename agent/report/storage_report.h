// The storage stack as JSON (schema iogate.detect/v1, and the "storage" section of probe
// reports) and as an lsblk-like tree for people.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "device/storage_stack.h"

namespace iogate {

inline constexpr const char kDetectSchema[] = "iogate.detect/v1";

// path, mount, class, reason, slowest_leaf, network, overlay_lowerdirs, stack (no schema key).
nlohmann::json storage_stack_to_json(const StorageStack& s);
// The same with "schema" first, for `iogate detect --output-format json`.
nlohmann::json detect_report_to_json(const StorageStack& s);

std::string render_storage_human(const StorageStack& s);

}  // namespace iogate
