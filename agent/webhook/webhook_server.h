// The admission webhook's HTTPS endpoints, on --listen (the API server only calls webhooks over
// TLS):
//   POST /mutate    AdmissionReview in, AdmissionReview out (the mutating webhook)
//   POST /validate  the same for the validating webhook
//   GET  /healthz   200 "ok" while the server runs (the Deployment's probes)
//   GET  /debug/node-cache  the node cache's state as JSON (for ops and benches; no node's data)
// The serving pair comes from a CertificateReloader on every handshake, so a certificate rotated
// by cert-manager is served to new connections without a restart; TLS 1.2 is the minimum.
//
// Bodies: application/json only (415), with a Content-Length (411 without one: chunked bodies
// are refused, the API server never sends them, and a declared length lets a body be refused or
// given room before a byte of it is read), at most max_body_bytes (413; kMaxAdmissionBody, the
// longest review the API server sends for a pod it can store). A Content-Length that is
// not digits only, or several that differ: 400. Methods other than GET, HEAD, POST: 405. Where
// the body is left unread the connection is closed after the answer.
//
// Memory is bounded whatever the clients send (docs/manual.md, "Connections"): a request's head as
// http/bounded_stream.h bounds it (414, 431); bodies being read or held, all connections
// together, within body_bytes_in_flight; and the reviews being parsed and decided within
// review_bytes_in_flight, each counted by what its JSON takes parsed (webhook/json_footprint.h:
// 4 to 40 times its size, freeing it included). A request waits for room in each, in arrival
// order, for up to half read_timeout, and gets 503 with Retry-After: 1 after that (the API
// server's webhook client calls again after that second, within its timeout); a review that
// could never fit gets 413. So many reviews of the largest size at once (64 of 8 MiB would be 512
// MiB of bodies alone) are not held at once but queued, then answered 503, never more than
// the budgets.
//
// Connections cannot starve it: one that sends nothing waits without a thread (HttpWorkers) and
// is closed after read_timeout; each served one has a thread of its own, up to max_workers.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "http/byte_budget.h"
#include "http/listener.h"
#include "webhook/admission.h"
#include "webhook/certificate_reloader.h"

namespace iogate {

struct WebhookHandlers {
  // Called on the server's worker threads, several at once; `body` is the request's JSON.
  std::function<HttpAnswer(const std::string&body)> mutate, validate;
  // GET /debug/node-cache's JSON; 404 when unset.
  std::function<std::string()> node_cache_state;
};

struct WebhookServerOptions {
  size_t max_body_bytes = kMaxAdmissionBody;
  // The chart's memory limit is 128 MiB, and the webhook takes about 7 MiB idle: bodies of 12 MiB
  // at once (one of the largest and a smaller one, or four of 3 MiB), and 64 MiB of reviews being
  // parsed (a 3 MiB review of a pod of short environment variables is counted at 44 MiB, one of a
  // long annotation at 21 MiB, one of 8 MiB of annotation at 56 MiB).
  size_t body_bytes_in_flight = 12 * 1024 * 1024;
  size_t review_bytes_in_flight = 64 * 1024 * 1024;
  // Longest wait for the next bytes of a handshake or request (not for a whole request), and for a
  // new connection's first bytes: the API server's own webhook timeout is 10 s by default, 30 s at
  // most.
  std::chrono::seconds read_timeout{10};
  // A kept-alive connection with no request holds its worker this long (the API server reuses its
  // connections; a new one costs a TLS handshake).
  std::chrono::seconds keep_alive_timeout{5};
  // Connections served at once, a thread each; connections waiting, without one, for their first
  // bytes or a worker (past it the longest silent one is closed). Together well under FD_SETSIZE
  // (1024), past which cpp-httplib cannot serve a socket, leaving room for the API client's.
  int max_workers = 256;
  int max_waiting = 256;
};

class WebhookServer {
 public:
  // Binds `listen` ("127.0.0.1:0": any free port) and serves on a thread of its own. `certificates`
  // must have been load()ed.
  static Result<std::unique_ptr<WebhookServer>> start(const std::string& listen,
                                                      std::shared_ptr<CertificateReloader> certificates,
                                                      WebhookHandlers handlers, WebhookServerOptions options = {});
  ~WebhookServer() = default;  // stops serving and joins
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  std::string address() const { return listener_->address(); }  // "127.0.0.1:8443", the port as bound
  int port() const { return listener_->port(); }

 private:
  WebhookServer() = default;
  std::shared_ptr<CertificateReloader> certificates_;  // outlives listener_: its handshakes read it
  std::unique_ptr<ByteBudget> reviews_;                // outlives listener_: its requests hold shares
  std::unique_ptr<HttpListener> listener_;
};

}  // namespace iogate
