// A PVC as a waiter sees it change: the watch of one PVC, and GETs where it cannot watch. Shared
// by the waiters of kube/shared_result.h (a lone pod waiting for another's probe) and
// kube/job_barrier.h (a job's pods meeting on their volume).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"
#include "kube/watch_stream.h"

namespace iogate {

struct PvcRef {
  std::string ns, name;
};

// "/api/v1/namespaces/NS/persistentvolumeclaims/NAME"
std::string pvc_path(const PvcRef& pvc);
// metadata.resourceVersion: what a write that must not overwrite a newer version carries.
std::string resource_version_of(const nlohmann::json& object);

// Successive versions of one PVC as a waiter sees them: a watch's events while it can watch
// (one request for the whole wait, as long as the holder renews), GETs otherwise. A watch that
// stays silent longer than the caller allows (its holder missed a renewal) gives way to GETs a
// poll interval apart, so that a lock is judged expired on the same evidence as always: reads
// no further apart than a third of its lease, none of them delayed by an API stall. Once a GET
// shows the PVC changed, the reader watches again.
class PvcReader {
 public:
  PvcReader(ApiClient& api, PvcRef pvc, const std::atomic<bool>* stop, std::chrono::milliseconds poll_interval)
      : api_(api), pvc_(std::move(pvc)), stop_(stop), poll_interval_(poll_interval) {}

  struct Seen {
    nlohmann::json pvc;
    std::chrono::steady_clock::time_point at;
  };

  // The PVC now (the first call), or its next version: waits for a change at most until `until`
  // and at most `silence` (then reads it, as a poll would). Nullopt at `until` or on a stop.
  ApiResult<std::optional<Seen>> next(std::chrono::steady_clock::time_point until,
                                      std::chrono::steady_clock::duration silence);

  // Where the reader does not watch, the PVC read now, without waiting a poll interval: after a
  // lost race the winner's write is already there. A watch brings that write on its own.
  bool watching() const { return stream_ != nullptr; }
  ApiResult<std::optional<Seen>> read_now() { return read(); }

 private:
  bool stopped() const { return stop_ && stop_->load(); }

  // Sleeps until `t` or a stop; false on a stop.
  bool sleep_until(std::chrono::steady_clock::time_point t) const;

  // Once a poll interval, as a waiter always did where it cannot watch: the PVC read after the
  // interval, or nullopt at `until` or on a stop.
  ApiResult<std::optional<Seen>> poll(std::chrono::steady_clock::time_point until);

  ApiResult<std::optional<Seen>> read();

  // Opens the next watch, from the last version read (none at first: the server then sends the
  // PVC as it is now, as an ADDED event). Where the API refuses to watch (a Role without the
  // verb, a server without watches), the reader polls for good; a failure that may pass (the
  // API down, a timeout) is left to the GET that follows, and the next call tries again.
  ApiStatus open_watch(std::chrono::steady_clock::time_point until);

  ApiClient& api_;
  PvcRef pvc_;
  const std::atomic<bool>* stop_;
  std::chrono::milliseconds poll_interval_;
  std::unique_ptr<WatchStream> stream_;
  std::string rv_;  // of the last version seen: a watch opened from it misses nothing after it
  bool first_ = true;
  bool can_watch_ = true;
  bool polling_ = false;  // after a silence, until a read shows a change
  std::chrono::steady_clock::time_point opened_at_;
};

}  // namespace iogate
