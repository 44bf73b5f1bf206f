// The node agent's HTTP endpoints, on --listen (default :9560), served by http/get_server.h
// (plain HTTP, GET and HEAD only, idle connections without a thread):
//   /metrics  Prometheus text format 0.0.4
//   /healthz  200 while the agent's loop is alive
//   /readyz   503 until the first round of probes is done, then 200
//   /report   the last JSON report (schema iogate.node/v1); 503 before the first round
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "http/get_server.h"

namespace iogate {

struct NodeHttpHandlers {
  std::function<HttpAnswer()> metrics, healthz, readyz, report;
};

using NodeHttpOptions = GetServerOptions;

class NodeHttpServer {
 public:
  // Binds (an address in use is an error now, not later) and serves on a thread of its own.
  static Result<std::unique_ptr<NodeHttpServer>> start(const std::string& listen, NodeHttpHandlers handlers,
                                                       NodeHttpOptions options = {});
  ~NodeHttpServer() = default;  // stops serving and joins
  NodeHttpServer(const NodeHttpServer&) = delete;
  NodeHttpServer& operator=(const NodeHttpServer&) = delete;

  std::string address() const { return server_->address(); }  // "127.0.0.1:9560", the port as bound

 private:
  NodeHttpServer() = default;
  std::unique_ptr<GetServer> server_;
};

}  // namespace iogate
