#include "webhook/node_cache.h"

namespace iogate {

NodeCache::NodeCache(Fetch fetch, std::chrono::milliseconds ttl, std::chrono::milliseconds negative_ttl,
                     std::function<Clock::time_point()> now)
    : fetch_(std::move(fetch)), ttl_(ttl), negative_ttl_(negative_ttl), now_(std::move(now)) {}

CachedNode NodeCache::get(const std::string& name) {
  auto fresh = [&]() -> std::optional<CachedNode> {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end() || now_() >= it->second.expires) return std::nullopt;
    CachedNode v = it->second.value;
    v.from_cache = true;
    return v;
  };
  if (auto v = fresh()) return *v;
  std::lock_guard<std::mutex> one_fetch(fetch_mu_);
  if (auto v = fresh()) return *v;  // another thread fetched it while we waited
  auto got = fetch_(name);
  CachedNode v;
  std::lock_guard<std::mutex> lock(mu_);
  ++fetches_;
  if (got.ok()) {
    v.found = true;
    v.node = std::move(*got);
    entries_[name] = {v, now_() + ttl_};
  } else if (got.error().not_found()) {
    entries_[name] = {v, now_() + negative_ttl_};
  } else {
    v.error = got.error().summary();
    entries_.erase(name);
  }
  return v;
}

int NodeCache::fetches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetches_;
}

}  // namespace iogate
