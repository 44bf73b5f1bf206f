// Keeps a NodeStore current the way client-go's informer does: LIST /api/v1/nodes in pages, then
// WATCH from the list's resourceVersion (with bookmarks), reopened from the last resourceVersion
// seen whenever the server ends it (its timeoutSeconds), and listed again when the watch cannot go
// on (410 Gone: the version is older than the server's watch cache keeps; an ERROR event; a watch
// that cannot be reopened). Failures are retried with backoff (kube/backoff.h), never given up.
//
// It runs on a thread of its own with an ApiClient of its own: a client serves one request at a
// time, and the admission path's fallback GETs (webhook/node_source.h) must not wait for a list.
//
// A watch that goes silent longer than `silence_limit` (the API server sends a bookmark every
// minute) is taken for a dead connection and reopened; until then it counts as open.
//
// Where the API refuses to list or watch nodes (403: a ClusterRole from an older chart, which
// grants `get` only) it logs one warning naming the fix and tries again every `forbidden_retry`
// quietly; the store stays unsynced, so every look-up goes to the GET path, as before.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"
#include "kube/backoff.h"
#include "webhook/node_store.h"

namespace iogate {

struct NodeInformerOptions {
  // Nodes per LIST page. Each page is held whole, parsed, while its Nodes become views: a real
  // Node's JSON is 10 to 30 KB (status.images alone up to 50 images), and parsed it takes about 10
  // times that, so 500 a page could take over 100 MB, most of the webhook's memory limit.
  int page_size = 100;
  // The watch's timeoutSeconds; each watch asks for a random time between this and twice it, so
  // that replicas do not reopen in step.
  std::chrono::seconds watch_timeout{150};
  std::chrono::milliseconds silence_limit{90000};
  // A LIST page or opening a watch, retries within it included.
  std::chrono::milliseconds request_deadline{30000};
  // Between failed lists or watches: full jitter from 1 s up to 30 s.
  RetryPolicy backoff{0, std::chrono::milliseconds(1000), std::chrono::milliseconds(30000)};
  std::chrono::milliseconds forbidden_retry{300000};
};

// What the informer knows beyond the store's state, for GET /debug/node-cache and logs.
struct NodeInformerState {
  bool forbidden = false;  // the API refuses list or watch: look-ups use GET
  int64_t list_failures = 0;
  int64_t watches = 0;  // watches opened
  int64_t expired = 0;  // 410 Gone: relisted
  std::string last_error;
};

nlohmann::json to_json(const NodeInformerState& s);

class NodeInformer {
 public:
  // Starts at once. `store` outlives the informer.
  NodeInformer(std::unique_ptr<ApiClient> api, NodeStore& store, NodeInformerOptions options = {});
  // Stops: a watch ends at once, a LIST in flight within its attempt's timeout.
  ~NodeInformer();
  NodeInformer(const NodeInformer&) = delete;
  NodeInformer& operator=(const NodeInformer&) = delete;

  NodeInformerState state() const;

 private:
  enum class After { kWatch, kRelist, kBackoff, kForbidden, kStop };
  void run();
  After list();
  After watch();
  After failed(const ApiError& e, const char* what);
  After expired();
  bool sleep_for(std::chrono::milliseconds d);  // false when stopped

  std::unique_ptr<ApiClient> api_;
  NodeStore& store_;
  const NodeInformerOptions options_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;  // guards state_; with wake_, the sleeps
  std::condition_variable wake_;
  NodeInformerState state_;
  bool warned_forbidden_ = false;
  int failures_ = 0;  // in a row, for the backoff
  std::thread thread_;
};

}  // namespace iogate
