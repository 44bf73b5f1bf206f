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
#include <string_view>
#include <thread>
#include <utility>

#include "base/result.h"

namespace httplib {
class Server;
}

namespace iogate {

struct HttpAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

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

// What every iogate listener needs beyond cpp-httplib's defaults, before binding: SO_REUSEADDR
// without the default SO_REUSEPORT (which would let a second server bind the same port and take
// half the connections).
void use_exclusive_port(httplib::Server& server);
// Binds host:port (port 0: any free one); the port as bound, or a usage error naming --listen.
Result<int> bind_listener(httplib::Server& server, const std::string& host, int port);
// "127.0.0.1:9560", "[::1]:9560": how logs and tests name a bound listener.
std::string listener_address(const std::string& host, int port);
// Runs server.listen_after_bind() on a new thread and returns once it accepts: stop() does nothing
// before that, so a server stopped right after starting would never join.
std::thread serve_in_background(httplib::Server& server);

// ":9560" → {"0.0.0.0", 9560}; "127.0.0.1:0" (any free port); "[::1]:9560". Errors name --listen.
Result<std::pair<std::string, int>> parse_listen_address(std::string_view text);

class NodeHttpServer {
 public:
  // Binds (an address in use is an error now, not later) and serves on a thread of its own.
  static Result<std::unique_ptr<NodeHttpServer>> start(const std::string& listen, NodeHttpHandlers handlers,
                                                       NodeHttpOptions options = {});
  ~NodeHttpServer();  // stops serving and joins
  NodeHttpServer(const NodeHttpServer&) = delete;
  NodeHttpServer& operator=(const NodeHttpServer&) = delete;

  std::string address() const { return address_; }  // "127.0.0.1:9560", the port as bound

 private:
  NodeHttpServer() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string address_;
};

}  // namespace iogate
