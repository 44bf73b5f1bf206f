// The node agent's HTTP endpoints, on --listen (default :9560):
//   /metrics  Prometheus text format 0.0.4
//   /healthz  200 while the agent's loop is alive
//   /readyz   503 until the first round of probes is done, then 200
//   /report   the last JSON report (schema iogate.node/v1); 503 before the first round
// Plain HTTP: the endpoints carry no secrets, and Prometheus scrapes DaemonSets this way. GET and
// HEAD only: anything else gets 405 before a byte of its body is read, and the connection closes.
// A connection that sends nothing waits without a thread (HttpWorkers): idle clients cannot keep
// the kubelet's probes out.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "http/listener.h"

namespace iogate {

struct NodeHttpHandlers {
  std::function<HttpAnswer()> metrics, healthz, readyz, report;
};

struct NodeHttpOptions {
  // For the next bytes of a request, and a new connection's first ones (no thread held meanwhile).
  std::chrono::seconds read_timeout{5};
  std::chrono::seconds keep_alive_timeout{5};  // a kept-alive connection holds its worker this long
  // Scrapes and probes are few: a handful of workers, more waiting ones without a thread.
  int max_workers = 16;
  int max_waiting = 64;
};

class NodeHttpServer {
 public:
  // Binds (an address in use is an error now, not later) and serves on a thread of its own.
  static Result<std::unique_ptr<NodeHttpServer>> start(const std::string& listen, NodeHttpHandlers handlers,
                                                       NodeHttpOptions options = {});
  ~NodeHttpServer() = default;  // stops serving and joins
  NodeHttpServer(const NodeHttpServer&) = delete;
  NodeHttpServer& operator=(const NodeHttpServer&) = delete;

  std::string address() const { return listener_->address(); }  // "127.0.0.1:9560", the port as bound

 private:
  NodeHttpServer() = default;
  std::unique_ptr<HttpListener> listener_;
};

}  // namespace iogate
