#include "kube/pvc_reader.h"

#include <algorithm>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/json_fields.h"

namespace iogate {
namespace {

using Steady = std::chrono::steady_clock;

// How long a watch of the PVC may stay open before the server ends it (its timeoutSeconds); a
// waiter then opens the next from the last resourceVersion, missing nothing.
constexpr std::chrono::seconds kMaxWatch{300};

// Successive versions of one PVC as a waiter sees them: a watch's events while it can watch
// (one request for the whole wait, as long as the holder renews), GETs otherwise. A watch that
// stays silent longer than the caller allows (its holder missed a renewal) gives way to GETs a
// poll interval apart, so that a lock is judged expired on the same evidence as always: reads
// no further apart than a third of its lease, none of them delayed by an API stall. Once a GET
// shows the PVC changed, the reader watches again.

}  // namespace

std::string pvc_path(const PvcRef& pvc) {
  return "/api/v1/namespaces/" + pvc.ns + "/persistentvolumeclaims/" + pvc.name;
}

std::string resource_version_of(const nlohmann::json& object) {
  return string_at(object_at(object, "metadata"), "resourceVersion");
}

ApiResult<std::optional<PvcReader::Seen>> PvcReader::next(Steady::time_point until, Steady::duration silence) {
  const bool first = std::exchange(first_, false);
  if (!stream_ && can_watch_ && !polling_) {
    auto opened = open_watch(until);
    if (!opened.ok()) return opened.error();
  }
  if (!stream_) return first ? read() : poll(until);
  const Steady::time_point silent_at = std::min(until, Steady::now() + silence);
  while (!stopped()) {
    const auto now = Steady::now();
    if (now >= silent_at) {
      stream_.reset();
      if (now >= until) return std::optional<Seen>();
      // No word for longer than a renewal takes: see for ourselves, then poll until it changes.
      polling_ = true;
      return read();
    }
    auto wait = std::min<Steady::duration>(std::chrono::milliseconds(100), silent_at - now);
    WatchStream::Read r = stream_->next(std::chrono::duration_cast<std::chrono::milliseconds>(wait));
    switch (r.next) {
      case WatchStream::Next::kIdle: continue;
      case WatchStream::Next::kEnded: {
        // The server's timeoutSeconds: the next watch starts where this one stopped. One that
        // ends as soon as it opens would be reopened in a loop: poll a while instead.
        stream_.reset();
        if (Steady::now() - opened_at_ < std::chrono::seconds(1)) {
          polling_ = true;
          return poll(until);
        }
        auto opened = open_watch(until);
        if (!opened.ok()) return opened.error();
        if (!stream_) return read();
        continue;
      }
      case WatchStream::Next::kFailed:
        stream_.reset();
        if (r.error.reason == "InvalidResponse") {
          // Not a watch at all (a server that answers a list): it never will be.
          can_watch_ = false;
          spdlog::warn("PVC {}: the API server does not watch ({}); polling it every {} ms instead", pvc_.name,
                       r.error.summary(), poll_interval_.count());
        } else {
          spdlog::debug("PVC {}: watch failed ({}); reading it", pvc_.name, r.error.summary());
        }
        return read();
      case WatchStream::Next::kEvent: break;
    }
    WatchEvent& e = r.event;
    if (e.type == WatchEventType::kBookmark) {
      rv_ = string_at(object_at(e.object, "metadata"), "resourceVersion");
      continue;
    }
    if (e.type == WatchEventType::kError) {
      // 410 Gone or another refusal to go on: start again from a fresh read.
      spdlog::debug("PVC {}: watch ended with {}; reading it", pvc_.name, e.object.dump());
      stream_.reset();
      if (watch_expired(e)) rv_.clear();
      return read();
    }
    if (e.type == WatchEventType::kDeleted) {
      stream_.reset();
      return ApiError{"WATCH " + pvc_path(pvc_), 404, "NotFound", "the PVC was deleted while waiting for it"};
    }
    rv_ = resource_version_of(e.object);
    return std::optional<Seen>(Seen{std::move(e.object), Steady::now()});
  }
  stream_.reset();
  return std::optional<Seen>();
}

bool PvcReader::sleep_until(Steady::time_point t) const {
  while (!stopped() && Steady::now() < t) {
    std::this_thread::sleep_for(std::min<Steady::duration>(std::chrono::milliseconds(50), t - Steady::now()));
  }
  return !stopped();
}

ApiResult<std::optional<PvcReader::Seen>> PvcReader::poll(Steady::time_point until) {
  if (!sleep_until(std::min(until, Steady::now() + poll_interval_)) || Steady::now() >= until) {
    return std::optional<Seen>();
  }
  return read();
}

ApiResult<std::optional<PvcReader::Seen>> PvcReader::read() {
  auto pvc = api_.get(pvc_path(pvc_));
  if (!pvc.ok()) return pvc.error();
  std::string rv = resource_version_of(*pvc);
  if (polling_ && rv != rv_) polling_ = false;  // it changed: watch from here
  rv_ = std::move(rv);
  return std::optional<Seen>(Seen{std::move(*pvc), Steady::now()});
}

ApiStatus PvcReader::open_watch(Steady::time_point until) {
  auto left = std::chrono::ceil<std::chrono::seconds>(until - Steady::now());
  left = std::clamp<std::chrono::seconds>(left, std::chrono::seconds(1), kMaxWatch);
  std::string path = fmt::format(
      "/api/v1/namespaces/{}/persistentvolumeclaims?watch=1&allowWatchBookmarks=true&fieldSelector=metadata.name%3D{}"
      "&timeoutSeconds={}",
      pvc_.ns, pvc_.name, left.count());
  if (!rv_.empty()) path += "&resourceVersion=" + rv_;
  auto opened = api_.watch(path);
  if (opened.ok()) {
    stream_ = std::move(*opened);
    opened_at_ = Steady::now();
    return Ok{};
  }
  const ApiError& e = opened.error();
  if (e.reason == "Stopped" || e.reason == "DeadlineExceeded") return e;
  const bool may_pass = e.http_status == 0 || transient_status(e.http_status);
  if (!may_pass) {
    can_watch_ = false;
    spdlog::warn(
        "PVC {}: cannot watch it ({}); polling it every {} ms instead (grant the preflight's Role "
        "watch on persistentvolumeclaims)",
        pvc_.name, e.summary(), poll_interval_.count());
  } else {
    spdlog::debug("PVC {}: watch not opened ({}); reading it", pvc_.name, e.summary());
  }
  return Ok{};
}

}  // namespace iogate
