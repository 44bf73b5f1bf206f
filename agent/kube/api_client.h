// The Kubernetes API client: JSON over HTTPS with the configured credentials, retried the way
// client-go retries, and bounded by one deadline (preflight's).
//
// - Retries, with exponential backoff and full jitter (kube/backoff.h), every transient failure:
//   connection refused, reset or closed (in the TLS handshake too), a timeout while connecting,
//   in the TLS handshake, writing or reading (kube/http_transport.h's TransportFailure), and the
//   answers 429, 500, 502, 503 and 504; a Retry-After from the server is honoured as given.
//   Everything else is returned at once, retrying would only meet it again: other 4xx, a 501, a
//   TLS alert or protocol error from the peer (a refused client certificate, no shared version),
//   a server certificate that does not verify. The exception is a 409 on a write its caller
//   declares repeatable (OnConflict::kRetry), which is retried the same way.
// - 401: re-reads the token file, or re-runs the exec plugin, and retries once (the kubelet may
//   have just rotated the token; the plugin's credential may have been revoked). The token file is
//   also re-read every minute, the plugin re-run once its credential expires. A plugin that fails
//   fails the request (reason "ExecCredential", not retried); a new client certificate from it
//   gets a new connection.
// - With a deadline, retries go on until it (RetryPolicy::max_attempts bounds only a client
//   without one); it bounds every attempt's timeout and every sleep: a retry that could not
//   finish in time is not started, and the error says the deadline was reached.
// - Logs each request at debug (method, path, status, duration) and each retry at warn with its
//   reason; never the token or the Authorization header.
//
// One client per process; thread-compatible (one request at a time).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/rng.h"
#include "kube/api_error.h"
#include "kube/backoff.h"
#include "kube/http_transport.h"
#include "kube/kube_config.h"
#include "kube/token_source.h"
#include "kube/watch_stream.h"

namespace iogate {

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386): lists replaced whole
  kStrategicMerge,  // application/strategic-merge-patch+json: lists merged by their key (conditions by type)
  kJsonPatch,       // application/json-patch+json (RFC 6902)
};

// What a 409 Conflict on a PATCH means to its caller. A patch that carries a resourceVersion is
// refused when the object moved on: repeating it can only be refused again, so the caller re-reads
// and redoes its edit (kReturn: kube/node_taints.cc, shared_result.cc). A merge patch of
// annotations or labels without one cannot be stale: a 409 there is the server's own contention
// (its internal update retries exhausted), and the same patch is safe to send again (kRetry).
enum class OnConflict { kReturn, kRetry };

// The client's view of time, injectable so tests can run a retry schedule without sleeping.
struct ClientClock {
  std::function<std::chrono::steady_clock::time_point()> now;
  std::function<void(std::chrono::milliseconds)> sleep;
  static ClientClock real();
};

class ApiClient {
 public:
  ApiClient(KubeConfig config, RetryPolicy retry = {});
  // For tests: a scripted transport, a fake clock and a fixed jitter seed.
  ApiClient(KubeConfig config, RetryPolicy retry, std::unique_ptr<Transport> transport, ClientClock clock,
            uint64_t jitter_seed);

  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // Not ok when the configuration could not become a TLS client (bad PEM, key not matching its
  // certificate, bad server URL); every request then fails with the same error.
  Status ready() const;

  // Every request and retry sleep ends by `deadline`; the default is none.
  void set_deadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }

  // A long-running agent's SIGTERM: once `stop` rises no new attempt starts and a retry sleep
  // ends early; the request fails with reason "Stopped". Null (the default) for none.
  void set_stop(const std::atomic<bool>* stop) { stop_ = stop; }

  const KubeConfig& config() const { return config_; }

  // Paths are the API's ("/api/v1/namespaces/ns/pods/p"), already escaped. The answer's JSON, or
  // an ApiError with the Status reason and message.
  ApiResult<nlohmann::json> get(const std::string& path);
  ApiResult<nlohmann::json> patch(const std::string& path, PatchType type, const nlohmann::json& body,
                                  OnConflict on_conflict = OnConflict::kReturn);
  ApiResult<nlohmann::json> post(const std::string& path, const nlohmann::json& body);

  // Opens a watch: `path` is a collection's with watch=1 and its selectors
  // ("/api/v1/namespaces/ns/persistentvolumeclaims?watch=1&fieldSelector=metadata.name%3Dc").
  // One attempt, the rotated token's 401 aside: a watch's caller reads the object again and
  // reopens after any end anyway, so it retries in its own loop. The stream has a connection of
  // its own and may outlive the client.
  ApiResult<std::unique_ptr<WatchStream>> watch(const std::string& path);

  // Counters for logs and tests.
  struct Stats {
    int requests = 0;  // HTTP exchanges attempted
    int retries = 0;   // backoff sleeps taken
    int token_reloads = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  // One attempt's timeout at `now`: the request timeout, cut to what the deadline leaves (1 ms at least).
  std::chrono::milliseconds attempt_timeout(std::chrono::steady_clock::time_point now) const;
  // The token for the request at `now`, after switching to the plugin's newest client
  // certificate when it gave one; an ApiError named for `request_name` when the plugin failed.
  ApiResult<std::string> credential_for(const std::string& request_name, std::chrono::steady_clock::time_point now);
  // Appends to a 401 that survived a refreshed credential which exec plugin gave it.
  void say_whose_credential(ApiError& e) const;
  ApiResult<nlohmann::json> call(const std::string& method, const std::string& path, const std::string& content_type,
                                 std::string body, OnConflict on_conflict = OnConflict::kReturn);

  KubeConfig config_;
  RetryPolicy retry_;
  std::unique_ptr<Transport> transport_;
  std::optional<Error> setup_error_;
  ClientClock clock_;
  FastRng rng_;
  TokenSource tokens_;
  bool owns_transport_ = false;        // made here from config_ (not a test's): may be remade
  uint64_t transport_generation_ = 0;  // the TokenSource generation whose certificate it carries
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* stop_ = nullptr;
  Stats stats_;
};

}  // namespace iogate
