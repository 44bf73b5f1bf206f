#include "node/node_http.h"

#include <httplib.h>

#include "http/pooled_server.h"

namespace iogate {

Result<std::unique_ptr<NodeHttpServer>> NodeHttpServer::start(const std::string& listen, NodeHttpHandlers handlers,
                                                              NodeHttpOptions options) {
  auto pooled = std::make_unique<PooledServer>(
      HttpServing{options.read_timeout, options.keep_alive_timeout, options.max_workers, options.max_waiting});
  PooledServer& server = *pooled;
  // GET and HEAD carry no body; what else comes is refused unread, and so is a GET's body.
  server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    int status = req.method == "GET" || req.method == "HEAD" ? request_framing_status(req, 0) : 405;
    if (status == 0) return httplib::Server::HandlerResponse::Unhandled;
    res.status = status;
    if (status == 405) {
      res.set_header("Allow", "GET, HEAD");
      res.set_content("method not allowed\n", "text/plain; charset=utf-8");
    }
    close_after_answer(res);
    return httplib::Server::HandlerResponse::Handled;
  });
  auto route = [&server](const char* path, std::function<HttpAnswer()> handler) {
    server.Get(path, [handler](const httplib::Request&, httplib::Response& res) {
      HttpAnswer a = handler();
      res.status = a.status;
      res.set_content(a.body, a.content_type.c_str());
    });
  };
  route("/metrics", handlers.metrics);
  route("/healthz", handlers.healthz);
  route("/readyz", handlers.readyz);
  route("/report", handlers.report);
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("iogate node: /metrics /healthz /readyz /report\n", "text/plain; charset=utf-8");
  });
  auto listener = HttpListener::start(listen, std::move(pooled));
  if (!listener.ok()) return listener.error();
  std::unique_ptr<NodeHttpServer> s(new NodeHttpServer());
  s->listener_ = std::move(*listener);
  return s;
}

}  // namespace iogate
