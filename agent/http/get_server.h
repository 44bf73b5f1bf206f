// A plain-HTTP server of read-only endpoints: the node agent's /metrics /healthz /readyz /report
// (node/node_http.h) and the webhook's /metrics /healthz (webhook/webhook.h, --metrics-listen).
// Plain HTTP: the endpoints carry no secrets, and Prometheus scrapes pods this way. GET and HEAD
// only: anything else gets 405 before a byte of its body is read, and the connection closes; a
// GET with a body is refused the same way. "/" lists the routes. A connection that sends nothing
// waits without a thread (HttpWorkers): idle clients cannot keep the kubelet's probes out.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "http/listener.h"

namespace iogate {

struct GetRoute {
  std::string path;  // "/metrics"
  std::function<HttpAnswer()> answer;
};

struct GetServerOptions {
  // For the next bytes of a request, and a new connection's first ones (no thread held meanwhile).
  std::chrono::seconds read_timeout{5};
  std::chrono::seconds keep_alive_timeout{5};  // a kept-alive connection holds its worker this long
  // Scrapes and probes are few: a handful of workers, more waiting ones without a thread.
  int max_workers = 16;
  int max_waiting = 64;
  std::string flag = "--listen";  // what errors name: the flag the address came from
};

class GetServer {
 public:
  // Binds (an address in use is an error now, not later) and serves on a thread of its own.
  // `name` heads the index at "/" ("iogate node").
  static Result<std::unique_ptr<GetServer>> start(const std::string& listen, const std::string& name,
                                                  std::vector<GetRoute> routes, GetServerOptions options = {});
  ~GetServer() = default;  // stops serving and joins
  GetServer(const GetServer&) = delete;
  GetServer& operator=(const GetServer&) = delete;

  std::string address() const { return listener_->address(); }  // "127.0.0.1:9560", the port as bound
  int port() const { return listener_->port(); }

 private:
  GetServer() = default;
  std::unique_ptr<HttpListener> listener_;
};

}  // namespace iogate
