// JSON Patch (RFC 6902) operations as the webhook writes them. Paths are JSON Pointers (RFC 6901),
// whose tokens must escape '~' as ~0 and '/' as ~1: an annotation key such as
// "iogate.io/node-requirements" is one token, "iogate.io~1node-requirements".
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace iogate {

// One reference token, escaped: "a/b~c" → "a~1b~0c".
std::string pointer_token(std::string_view token);

// "/" + escaped tokens joined by "/": pointer({"metadata", "annotations", "iogate.io/x"}).
std::string pointer(std::initializer_list<std::string_view> tokens);

// {"op":"add","path":path,"value":value}. On an object member that exists, add replaces it.
nlohmann::json patch_add(std::string path, nlohmann::json value);
// {"op":"copy","from":from,"path":path}: the API server copies the value within the pod, so a
// patch that repeats a large part of the pod stays small, and the webhook copies nothing (the API
// server counts what copies add against its own bound, 3 MiB a patch).
nlohmann::json patch_copy(std::string from, std::string path);

// The length of value.dump() (compact, invalid UTF-8 replaced), counted without writing it: what
// copying `value` adds to the pod's JSON.
size_t json_text_bytes(const nlohmann::json& value);

}  // namespace iogate
