#include "webhook/node_informer.h"

#include <cctype>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/json_fields.h"

namespace iogate {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How often the cache's state is logged at info: each minute in which nodes changed, else every 5.
constexpr std::chrono::minutes kStateLogBusy{1}, kStateLogQuiet{5};
// A watch read waits this long at most, so that a stop is seen soon.
constexpr milliseconds kReadWait{500};
// A watch that ends sooner than this without an event did not work: back off before the next.
constexpr std::chrono::seconds kShortestWatch{1};

long long ms_since(Clock::time_point t) { return std::chrono::duration_cast<milliseconds>(Clock::now() - t).count(); }

// A query parameter's value (a continue token is base64: '+', '/', '=').
std::string query_escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// "5000 nodes, 2431 KiB, ...": bench/fleet.sh reads the count from the last such line.
std::string state_line(const NodeStoreState& s) {
  return fmt::format(
      "{} nodes, {} KiB, resourceVersion {}, {} lists, {} events, {} bookmarks, watching {}, last event's lag {}",
      s.nodes, s.bytes / 1024, s.resource_version, s.lists, s.events, s.bookmarks, s.watching,
      s.last_event_lag ? fmt::format("{} ms", s.last_event_lag->count()) : "unknown");
}

}  // namespace

nlohmann::json to_json(const NodeInformerState& s) {
  return {{"forbidden", s.forbidden},
          {"list_failures", s.list_failures},
          {"watches", s.watches},
          {"expired", s.expired},
          {"last_error", s.last_error}};
}

NodeInformer::NodeInformer(std::unique_ptr<ApiClient> api, NodeStore& store, NodeInformerOptions options)
    : api_(std::move(api)), store_(store), options_(options) {
  api_->set_stop(&stop_);
  thread_ = std::thread([this] { run(); });
}

NodeInformer::~NodeInformer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

NodeInformerState NodeInformer::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

bool NodeInformer::sleep_for(milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  wake_.wait_for(lock, d, [&] { return stop_.load(); });
  return !stop_;
}

void NodeInformer::run() {
  FastRng rng(static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
  After next = After::kRelist;
  while (!stop_) {
    switch (next) {
      case After::kRelist: next = list(); break;
      case After::kWatch: next = watch(); break;
      case After::kBackoff:
        sleep_for(backoff_delay(options_.backoff, std::max(failures_, 1), std::nullopt, rng));
        next = After::kRelist;
        break;
      case After::kForbidden:
        sleep_for(options_.forbidden_retry);
        next = After::kRelist;
        break;
      case After::kStop: return;
    }
  }
}

NodeInformer::After NodeInformer::failed(const ApiError& e, const char* what) {
  if (e.reason == "Stopped" || stop_) return After::kStop;
  const bool refused = e.http_status == 403;  // RBAC; a 401 (a token refused) may pass with the next
  bool warn_refusal = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_.last_error = e.summary();
    if (std::string_view(what) == "list") ++state_.list_failures;
    if (refused) {
      state_.forbidden = true;
      warn_refusal = !warned_forbidden_;
      warned_forbidden_ = true;
    }
  }
  if (refused) {
    if (warn_refusal) {
      spdlog::warn(
          "node cache: cannot {} nodes ({}); /validate looks each node up with GET /api/v1/nodes/NAME instead "
          "(--node-cache-ttl). Fix: grant the webhook's ClusterRole list and watch on nodes (the chart's "
          "webhook-rbac.yaml does: helm upgrade); trying again every {} s",
          what, e.summary(), options_.forbidden_retry.count() / 1000);
    } else {
      spdlog::debug("node cache: still cannot {} nodes ({})", what, e.summary());
    }
    return After::kForbidden;
  }
  ++failures_;
  spdlog::warn("node cache: {} of nodes failed ({}); listing again after a backoff (failure {} in a row)", what,
               e.summary(), failures_);
  return After::kBackoff;
}

NodeInformer::After NodeInformer::expired() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++state_.expired;
  }
  spdlog::info("node cache: resourceVersion {} is too old to watch from (410 Gone); listing again",
               store_.resource_version());
  return After::kRelist;
}

NodeInformer::After NodeInformer::list() {
  const auto started = Clock::now();
  NodeStore::Listing listing;
  std::string cont, rv;
  int pages = 0;
  do {
    std::string path = fmt::format("/api/v1/nodes?limit={}", options_.page_size);
    if (!cont.empty()) path += "&continue=" + query_escape(cont);
    api_->set_deadline(Clock::now() + options_.request_deadline);
    auto page = api_->get(path);
    if (!page.ok()) return failed(page.error(), "list");
    for (const nlohmann::json& node : array_at(*page, "items")) listing.add(node);
    const nlohmann::json& metadata = object_at(*page, "metadata");
    rv = string_at(metadata, "resourceVersion");
    cont = string_at(metadata, "continue");
    ++pages;
    if (stop_) return After::kStop;
  } while (!cont.empty());
  store_.replace(std::move(listing), rv, Clock::now());
  bool was_forbidden;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_forbidden = state_.forbidden;
    state_.forbidden = false;
  }
  if (was_forbidden) spdlog::info("node cache: nodes may be listed now; look-ups are answered from the watch");
  spdlog::info("node cache: {}; listed in {} page{} ({} ms) at resourceVersion {}",
               state_line(store_.state(Clock::now())), pages, pages == 1 ? "" : "s", ms_since(started), rv);
  return After::kWatch;
}

NodeInformer::After NodeInformer::watch() {
  FastRng rng(static_cast<uint64_t>(Clock::now().time_since_epoch().count()) ^ 0x5bd1e995);
  auto last_log = Clock::now();
  int64_t logged_events = store_.state(last_log).events;
  for (;;) {
    const auto timeout = options_.watch_timeout.count() + rng.below(options_.watch_timeout.count() + 1);
    const std::string path =
        fmt::format("/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion={}&timeoutSeconds={}",
                    query_escape(store_.resource_version()), timeout);
    api_->set_deadline(Clock::now() + options_.request_deadline);
    auto opened = api_->watch(path);
    if (!opened.ok() && opened.error().http_status == 410) return expired();
    if (!opened.ok()) return failed(opened.error(), "watch");
    std::unique_ptr<WatchStream> stream = std::move(*opened);
    const auto opened_at = Clock::now();
    store_.watch_opened(opened_at);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++state_.watches;
    }
    auto last_heard = opened_at;
    bool heard = false;
    for (bool reopen = false; !reopen;) {
      WatchStream::Read r = stream->next(kReadWait);
      const auto now = Clock::now();
      if (stop_) {
        store_.watch_closed(now);
        return After::kStop;
      }
      if (now - last_log >= kStateLogBusy) {
        NodeStoreState st = store_.state(now);
        if (st.events != logged_events || now - last_log >= kStateLogQuiet) {
          spdlog::info("node cache: {}", state_line(st));
          last_log = now;
          logged_events = st.events;
        }
      }
      switch (r.next) {
        case WatchStream::Next::kIdle:
          if (now - last_heard > options_.silence_limit) {
            // The server bookmarks every minute: the connection is gone without a word.
            spdlog::warn("node cache: the watch has been silent for {} ms; opening another", ms_since(last_heard));
            store_.watch_closed(now);
            reopen = true;
          }
          break;
        case WatchStream::Next::kEnded:
          store_.watch_closed(now);
          if (!heard && now - opened_at < kShortestWatch) {
            ++failures_;
            spdlog::debug("node cache: the watch ended as it opened; opening another after a backoff");
            if (!sleep_for(backoff_delay(options_.backoff, failures_, std::nullopt, rng))) return After::kStop;
          } else {
            failures_ = 0;
          }
          reopen = true;
          break;
        case WatchStream::Next::kFailed:
          // A broken connection: the next watch starts where this one stopped (the server's watch
          // cache keeps minutes of changes); if it cannot be opened, list again.
          store_.watch_closed(now);
          ++failures_;
          spdlog::info("node cache: the watch failed ({}); opening another", r.error.summary());
          if (!sleep_for(backoff_delay(options_.backoff, failures_, std::nullopt, rng))) return After::kStop;
          reopen = true;
          break;
        case WatchStream::Next::kEvent:
          last_heard = now;
          heard = true;
          if (r.event.type == WatchEventType::kError) {
            store_.watch_closed(now);
            if (watch_expired(r.event)) return expired();
            const nlohmann::json& status = r.event.object;
            auto code = status.find("code");
            return failed(ApiError{"WATCH /api/v1/nodes",
                                   code != status.end() && code->is_number_integer() ? code->get<int>() : 0,
                                   string_at(status, "reason"), string_at(status, "message")},
                          "watch");
          }
          store_.apply(r.event, now);
          failures_ = 0;
          break;
      }
    }
  }
}

}  // namespace iogate
