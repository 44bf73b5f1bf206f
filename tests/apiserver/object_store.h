// The test server's etcd: objects by (resource, namespace, name), stored as JSON in their
// core form, and one cluster-wide resourceVersion counter that every real write advances.
// Not thread-safe: the API handler serialises access under its own lock.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace iogate::apiserver {

class ObjectStore {
 public:
  std::optional<nlohmann::json> get(const std::string& resource, const std::string& ns, const std::string& name) const;
  // ns empty: every namespace (and the cluster-scoped objects of `resource`). Sorted by ns, name.
  std::vector<nlohmann::json> list(const std::string& resource, const std::string& ns) const;

  // Creates or replaces the object (namespace and name from its metadata). Fills uid and
  // creationTimestamp when missing, sets metadata.resourceVersion to the next counter value and
  // returns what it stored. A write that changes nothing (ignoring resourceVersion) is no write:
  // the stored object and its resourceVersion stay, as etcd3's GuaranteedUpdate does.
  nlohmann::json put(const std::string& resource, nlohmann::json object);
  bool erase(const std::string& resource, const std::string& ns, const std::string& name);

  // The counter's current value: what a List's metadata.resourceVersion reports.
  uint64_t resource_version() const { return resource_version_; }

  // Fills uid and creationTimestamp as a create does, without storing (for dryRun).
  static void fill_create_metadata(nlohmann::json& object);

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // resource, namespace, name
  std::map<Key, nlohmann::json> objects_;
  uint64_t resource_version_ = 1000;
};

// "2025-01-02T03:04:05Z"
std::string rfc3339_now();
// "2025-01-02T03:04:05.123456Z", for MicroTime fields such as eventTime.
std::string rfc3339_micro_now();
std::string random_uid();
std::string random_suffix(size_t length);  // for generateName: lowercase consonants and digits

}  // namespace iogate::apiserver
