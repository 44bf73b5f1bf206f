// The nodes a list+watch of /api/v1/nodes has seen, each as a decision reads it (decision_view in
// webhook/node_check.h), and how current they are: the webhook's answer to "what are node N's
// labels now" without a request on the admission path.
//
// Current means synced (a whole list has been applied) and the watch healthy: open, or closed for
// no longer than `max_lag` (the time a reopen or a relist may take). Otherwise find() answers
// kStale and the caller asks the API itself (webhook/node_source.h): no decision is taken on
// labels older than the watch's lag. While current, a node the store lacks does not exist (one
// that joined after the list arrives as ADDED).
//
// Thread-safe: one writer (the informer's thread), any number of readers; a reader holds the lock
// only to copy a pointer.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/watch_stream.h"

namespace iogate {

// For logs, tests and GET /debug/node-cache.
struct NodeStoreState {
  size_t nodes = 0;
  size_t bytes = 0;  // what the nodes' views take parsed (json_footprint of each), keys included
  bool synced = false;
  bool watching = false;
  bool current = false;                                    // what find() would go by now
  std::optional<std::chrono::milliseconds> since_contact;  // the last list, watch opened, event or bookmark
  std::string resource_version;
  int64_t lists = 0;   // whole lists applied (the first and every relist)
  int64_t events = 0;  // ADDED, MODIFIED, DELETED applied
  int64_t bookmarks = 0;
  // The last event's lag: when the store applied it less when the API server last wrote the node
  // (its newest managedFields time, whole seconds, so a lag under a second reads as 0 to 1 s).
  std::optional<std::chrono::milliseconds> last_event_lag;
};

nlohmann::json to_json(const NodeStoreState& s);

class NodeStore {
 public:
  using Clock = std::chrono::steady_clock;

  explicit NodeStore(std::chrono::milliseconds max_lag);

  enum class Answer {
    kFound,     // `node` is its decision view
    kNotFound,  // no such node, as of the watch
    kStale,     // the store is not current: ask the API
  };
  struct Found {
    Answer answer = Answer::kStale;
    std::shared_ptr<const nlohmann::json> node;
  };
  Found find(const std::string& name, Clock::time_point now) const;

  struct Entry {
    std::shared_ptr<const nlohmann::json> view;
    size_t bytes = 0;
  };
  // A list as it is read, page by page: each Node kept as its view at once, so that a list of
  // 5,000 nodes never holds more than one page of whole Nodes.
  struct Listing {
    std::map<std::string, Entry> nodes;
    size_t bytes = 0;
    void add(const nlohmann::json& node);
  };

  // The informer's side. A whole list replaces what was there: nodes deleted while the watch was
  // down go with it. The store is then synced and in contact.
  void replace(Listing listing, const std::string& resource_version, Clock::time_point now);
  // An ADDED, MODIFIED or DELETED Node, or a BOOKMARK: applied, its resourceVersion kept, contact.
  // ERROR events are the informer's to handle. `wall` is for the lag (managedFields are wall time).
  void apply(const WatchEvent& e, Clock::time_point now,
             std::chrono::system_clock::time_point wall = std::chrono::system_clock::now());
  void watch_opened(Clock::time_point now);
  void watch_closed(Clock::time_point now);

  std::string resource_version() const;
  NodeStoreState state(Clock::time_point now) const;

 private:
  static Entry entry_of(const nlohmann::json& node);
  bool current(Clock::time_point now) const;  // mu_ held

  const std::chrono::milliseconds max_lag_;
  mutable std::mutex mu_;  // guards everything below
  std::map<std::string, Entry> nodes_;
  size_t bytes_ = 0;
  bool synced_ = false;
  bool watching_ = false;
  std::optional<Clock::time_point> contact_;
  std::string resource_version_;
  int64_t lists_ = 0, events_ = 0, bookmarks_ = 0;
  std::optional<std::chrono::milliseconds> last_event_lag_;
};

// The Node's newest managedFields time: when the API server last wrote it, to the second.
std::optional<std::chrono::system_clock::time_point> last_written(const nlohmann::json& node);

}  // namespace iogate
