// The admission webhook's HTTPS endpoints, on --listen (the API server only calls webhooks over
// TLS):
//   POST /mutate    AdmissionReview in, AdmissionReview out (the mutating webhook)
//   POST /validate  the same for the validating webhook
//   GET  /healthz   200 "ok" while the server runs (the Deployment's probes)
// The serving pair comes from a CertificateReloader on every handshake, so a certificate rotated
// by cert-manager is served to new connections without a restart; TLS 1.2 is the minimum.
//
// Bodies: application/json only (415), at most max_body_bytes whether sent with a Content-Length
// or chunked (413; a declared length over it is answered before its body is read, and the
// connection closed); a POST with neither gets 411; a Content-Length that is not digits only, or
// one with a Transfer-Encoding, 400 and the connection closed. Methods other than GET, HEAD,
// POST: 405.
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
#include "http/listener.h"
#include "webhook/certificate_reloader.h"

namespace iogate {

struct WebhookHandlers {
  // Called on the server's worker threads, several at once; `body` is the request's JSON.
  std::function<HttpAnswer(const std::string&body)> mutate, validate;
};

struct WebhookServerOptions {
  // An AdmissionReview carries the object and its old version; etcd caps an object near 1.5 MiB.
  size_t max_body_bytes = 3 * 1024 * 1024;
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
  std::unique_ptr<HttpListener> listener_;
};

}  // namespace iogate
