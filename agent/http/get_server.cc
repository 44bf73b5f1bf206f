#include "http/get_server.h"

#include <httplib.h>

#include "http/pooled_server.h"

namespace iogate {

Result<std::unique_ptr<GetServer>> GetServer::start(const std::string& listen, const std::string& name,
                                                    std::vector<GetRoute> routes, GetServerOptions options) {
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
  std::string index = name + ":";
  for (GetRoute& r : routes) {
    index += " " + r.path;
    server.Get(r.path, [answer = std::move(r.answer)](const httplib::Request&, httplib::Response& res) {
      HttpAnswer a = answer();
      res.status = a.status;
      res.set_content(a.body, a.content_type.c_str());
    });
  }
  index += "\n";
  server.Get("/", [index](const httplib::Request&, httplib::Response& res) {
    res.set_content(index, "text/plain; charset=utf-8");
  });
  auto listener = HttpListener::start(listen, std::move(pooled), options.flag);
  if (!listener.ok()) return listener.error();
  std::unique_ptr<GetServer> s(new GetServer());
  s->listener_ = std::move(*listener);
  return s;
}

}  // namespace iogate
