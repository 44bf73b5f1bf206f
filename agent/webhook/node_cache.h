// Node look-ups for /validate, kept briefly: an admission webhook answers within the API
// server's timeoutSeconds, and a Job that creates 64 pods pinned to one node must not cost 64 GETs.
//
// A node is fetched at most once per `ttl` (a missing node once per `negative_ttl`: it may be
// joining); a failed fetch (API down, RBAC) is not cached, so the next request tries again.
// Thread-safe: requests arrive on several threads, while fetches run one at a time (the
// Kubernetes client serves one request at a time); a thread that finds a fresh entry never waits
// for another's fetch.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/api_error.h"

namespace iogate {

struct CachedNode {
  bool found = false;
  nlohmann::json node;  // the Node, when found
  std::string error;    // the fetch's failure, when neither found nor known to be missing
  bool from_cache = false;
};

class NodeCache {
 public:
  using Clock = std::chrono::steady_clock;
  using Fetch = std::function<ApiResult<nlohmann::json>(const std::string& name)>;

  NodeCache(
      Fetch fetch, std::chrono::milliseconds ttl, std::chrono::milliseconds negative_ttl,
      std::function<Clock::time_point()> now = [] { return Clock::now(); });

  CachedNode get(const std::string& name);

  int fetches() const;  // for tests and logs

 private:
  struct Entry {
    CachedNode value;
    Clock::time_point expires;
  };
  Fetch fetch_;
  std::chrono::milliseconds ttl_, negative_ttl_;
  std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;  // guards entries_ and fetches_
  std::mutex fetch_mu_;    // one fetch at a time
  std::map<std::string, Entry> entries_;
  int fetches_ = 0;
};

}  // namespace iogate
