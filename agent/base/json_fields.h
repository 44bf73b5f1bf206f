// Tolerant reads of API objects: a missing or mistyped field reads as empty instead of throwing,
// since the API server (or a mutating webhook) owns their shape, not us.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace iogate {

inline std::string string_at(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// object[key] when it is an object or array of the wanted kind; a static empty one otherwise.
inline const nlohmann::json& object_at(const nlohmann::json& object, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!object.is_object()) return empty;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : empty;
}

inline const nlohmann::json& array_at(const nlohmann::json& object, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  if (!object.is_object()) return empty;
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : empty;
}

}  // namespace iogate
