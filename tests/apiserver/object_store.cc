#include "object_store.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

namespace iogate::apiserver {

using nlohmann::json;

namespace {

std::mt19937_64& rng() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

json without_resource_version(json object) {
  if (object.contains("metadata") && object["metadata"].is_object()) object["metadata"].erase("resourceVersion");
  return object;
}

}  // namespace

std::string rfc3339_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string rfc3339_micro_now() {
  auto now = std::chrono::system_clock::now();
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[48];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%06lldZ", static_cast<long long>(us));
  return buf;
}

std::string random_uid() {
  std::uniform_int_distribution<int> hex(0, 15);
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    out += "0123456789abcdef"[hex(rng())];
  }
  return out;
}

std::string random_suffix(size_t length) {
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // k8s.io/apimachinery/pkg/util/rand
  std::uniform_int_distribution<size_t> pick(0, sizeof alphabet - 2);
  std::string out;
  for (size_t i = 0; i < length; ++i) out += alphabet[pick(rng())];
  return out;
}

void ObjectStore::fill_create_metadata(json& object) {
  json& meta = object["metadata"];
  if (!meta.contains("uid") || meta["uid"] == "") meta["uid"] = random_uid();
  if (!meta.contains("creationTimestamp") || meta["creationTimestamp"].is_null()) {
    meta["creationTimestamp"] = rfc3339_now();
  }
}

std::optional<json> ObjectStore::get(const std::string& resource, const std::string& ns,
                                     const std::string& name) const {
  auto it = objects_.find({resource, ns, name});
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

std::vector<json> ObjectStore::list(const std::string& resource, const std::string& ns) const {
  std::vector<json> out;
  for (const auto& [key, object] : objects_) {
    if (std::get<0>(key) != resource) continue;
    if (!ns.empty() && std::get<1>(key) != ns) continue;
    out.push_back(object);
  }
  return out;
}

json ObjectStore::put(const std::string& resource, json object) {
  fill_create_metadata(object);
  json& meta = object["metadata"];
  Key key{resource, meta.value("namespace", ""), meta.value("name", "")};
  if (auto it = objects_.find(key); it != objects_.end()) {
    if (without_resource_version(it->second) == without_resource_version(object)) return it->second;
  }
  meta["resourceVersion"] = std::to_string(++resource_version_);
  objects_[key] = object;
  return object;
}

bool ObjectStore::erase(const std::string& resource, const std::string& ns, const std::string& name) {
  if (objects_.erase({resource, ns, name}) == 0) return false;
  ++resource_version_;
  return true;
}

}  // namespace iogate::apiserver
