// /validate's node look-up (admission.h's NodeLookup): from the list+watch store while it is
// current (webhook/node_store.h), no request on the admission path; otherwise, while the store is
// not synced yet, its watch has been down longer than its lag bound, or the API refuses to list
// nodes, from the per-name GET cache (webhook/node_cache.h, a short TTL). So a decision reads
// labels no older than the watch's lag, or the GET cache's TTL.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "webhook/admission.h"
#include "webhook/node_cache.h"
#include "webhook/node_store.h"

namespace iogate {

struct NodeSourceCounters {
  int64_t from_watch = 0;  // answered by the store: found or, as of the watch, no such node
  int64_t from_get = 0;    // answered by the GET cache (a GET, or one it made within its TTL)
  int64_t gets = 0;        // GETs the GET cache made
};

nlohmann::json to_json(const NodeSourceCounters& c);

class NodeSource {
 public:
  // `store` null: no watch (no API, or none wanted); every look-up goes to `fallback`. Both
  // outlive the source.
  NodeSource(const NodeStore* store, NodeCache& fallback);

  NodeView lookup(const std::string& name);
  NodeSourceCounters counters() const;

 private:
  const NodeStore* store_;
  NodeCache& fallback_;
  std::atomic<int64_t> from_watch_{0}, from_get_{0};
};

}  // namespace iogate
