// A Kubernetes watch read as it arrives: the API server's newline-delimited JSON events
// ({"type":"MODIFIED","object":{...}}) cut out of a body stream (kube/http_transport.h).
//
// A watch is how a client waits for an object to change without asking again and again: one
// request, then the server pushes each change, served from its watch cache (no etcd read). It
// ends when the request's timeoutSeconds runs out (the server closes the body), when its
// resourceVersion is too old to start from (an ERROR event with a 410 Status), or on a failure.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/api_error.h"
#include "kube/http_transport.h"

namespace iogate {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  WatchEventType type = WatchEventType::kModified;
  nlohmann::json object;  // the object after the change; a Status for kError; for kBookmark
                          // only metadata.resourceVersion
};

class WatchStream {
 public:
  WatchStream(std::string request_name, std::unique_ptr<BodyStream> body);

  enum class Next {
    kEvent,   // `event` is the next change
    kIdle,    // nothing within the wait; the watch goes on
    kEnded,   // the server closed it (its timeoutSeconds): open another from the last resourceVersion
    kFailed,  // `error`: a broken connection or a line that is not an event; nothing more will come
  };
  struct Read {
    Next next = Next::kIdle;
    WatchEvent event;
    ApiError error;
  };
  // The next event, waiting up to `wait` for it.
  Read next(std::chrono::milliseconds wait);

 private:
  std::string request_;
  std::unique_ptr<BodyStream> body_;
  std::string buffer_;  // bytes read past the last whole line
  bool ended_ = false;
};

// One line of a watch's body as an event; nullopt when it is not one.
std::optional<WatchEvent> parse_watch_event(std::string_view line);

// Whether an ERROR event is 410 Gone ("too old resource version"): the watch must start again
// from a fresh read, not from its last resourceVersion.
bool watch_expired(const WatchEvent& e);

}  // namespace iogate
