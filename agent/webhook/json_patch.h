// JSON Patch (RFC 6902) operations as the webhook writes them. Paths are JSON Pointers (RFC 6901),
// whose tokens must escape '~' as ~0 and '/' as ~1: an annotation key such as
// "iogate.io/node-requirements" is one token, "iogate.io~1node-requirements".
#pragma once

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
// {"op":"replace",...}: the member must exist.
nlohmann::json patch_replace(std::string path, nlohmann::json value);

}  // namespace iogate
