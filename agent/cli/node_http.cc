#include "cli/node_http.h"

#include <sys/socket.h>

#include <charconv>
#include <chrono>

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include "cli/pooled_server.h"

namespace iogate {

void use_exclusive_port(httplib::Server& server) {
  // SO_REUSEADDR alone still allows a restart over TIME_WAIT sockets.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
}

Result<int> bind_listener(httplib::Server& server, const std::string& host, int port) {
  if (port == 0) {
    int bound = server.bind_to_any_port(host);
    if (bound < 0) return usage_error(fmt::format("--listen: cannot bind {}: no free port", listener_address(host, 0)));
    return bound;
  }
  if (!server.bind_to_port(host, port)) {
    return usage_error(fmt::format("--listen: cannot bind {} (in use, or not an address of this host)",
                                   listener_address(host, port)));
  }
  return port;
}

std::string listener_address(const std::string& host, int port) {
  return fmt::format("{}:{}", host.find(':') != std::string::npos ? "[" + host + "]" : host, port);
}

std::thread serve_in_background(httplib::Server& server) {
  std::thread t([&server] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return t;
}

Result<std::pair<std::string, int>> parse_listen_address(std::string_view text) {
  auto bad = [&] {
    return usage_error(fmt::format("--listen: expected HOST:PORT, :PORT or [IPv6]:PORT, got \"{}\"", text));
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad();
  std::string host(text.substr(0, colon));
  std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos) return bad();
  if (host.empty()) host = "0.0.0.0";
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return bad();
  }
  return std::pair{host, port};
}

Result<std::unique_ptr<NodeHttpServer>> NodeHttpServer::start(const std::string& listen, NodeHttpHandlers handlers,
                                                             NodeHttpOptions options) {
  auto address = parse_listen_address(listen);
  if (!address.ok()) return address.error();
  auto [host, port] = *address;
  std::unique_ptr<NodeHttpServer> s(new NodeHttpServer());
  auto pooled = std::make_unique<PooledServer>(
      HttpServing{options.read_timeout, options.keep_alive_timeout, options.max_workers, options.max_waiting});
  PooledServer& server = *pooled;
  s->server_ = std::move(pooled);
  use_exclusive_port(server);
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
  auto bound = bind_listener(server, host, port);
  if (!bound.ok()) return bound.error();
  server.widen_backlog();
  s->address_ = listener_address(host, *bound);
  s->thread_ = serve_in_background(server);
  return s;
}

NodeHttpServer::~NodeHttpServer() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace iogate
