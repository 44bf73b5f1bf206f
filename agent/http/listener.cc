#include "http/listener.h"

#include <sys/socket.h>

#include <charconv>
#include <chrono>

#include <fmt/format.h>
#include <httplib.h>

#include "http/pooled_server.h"

namespace iogate {

Result<std::pair<std::string, int>> parse_listen_address(std::string_view text, std::string_view flag) {
  auto bad = [&] {
    return usage_error(fmt::format("{}: expected HOST:PORT, :PORT or [IPv6]:PORT, got \"{}\"", flag, text));
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
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 ||
      port > 65535) {
    return bad();
  }
  return std::pair{host, port};
}

namespace {

// "127.0.0.1:9560", "[::1]:9560": how logs and HttpListener::address() name a bound listener.
std::string listener_address(const std::string& host, int port) {
  return fmt::format("{}:{}", host.find(':') != std::string::npos ? "[" + host + "]" : host, port);
}

// Binds host:port (port 0: any free one); the port as bound, or a usage error naming `flag`.
Result<int> bind_exclusive(httplib::Server& server, const std::string& host, int port, std::string_view flag) {
  // In place of cpp-httplib's default options, which add SO_REUSEPORT.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  if (port == 0) {
    int bound = server.bind_to_any_port(host);
    if (bound < 0) return usage_error(fmt::format("{}: cannot bind {}: no free port", flag, listener_address(host, 0)));
    return bound;
  }
  if (!server.bind_to_port(host, port)) {
    return usage_error(
        fmt::format("{}: cannot bind {} (in use, or not an address of this host)", flag, listener_address(host, port)));
  }
  return port;
}

}  // namespace

template <class Base>
Result<std::unique_ptr<HttpListener>> HttpListener::bind_and_serve(std::string_view listen,
                                                                   std::unique_ptr<Pooled<Base>> server,
                                                                   std::string_view flag) {
  auto address = parse_listen_address(listen, flag);
  if (!address.ok()) return address.error();
  const auto& [host, port] = *address;
  auto bound = bind_exclusive(*server, host, port, flag);
  if (!bound.ok()) return bound.error();
  server->widen_backlog();
  std::unique_ptr<HttpListener> l(new HttpListener());
  l->address_ = listener_address(host, *bound);
  l->port_ = *bound;
  httplib::Server& s = *server;
  l->server_ = std::move(server);
  l->thread_ = std::thread([&s] { s.listen_after_bind(); });
  // stop() does nothing before the server runs: one stopped right after starting would never join.
  while (!s.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return l;
}

Result<std::unique_ptr<HttpListener>> HttpListener::start(std::string_view listen,
                                                          std::unique_ptr<Pooled<httplib::Server>> server,
                                                          std::string_view flag) {
  return bind_and_serve(listen, std::move(server), flag);
}

Result<std::unique_ptr<HttpListener>> HttpListener::start(std::string_view listen,
                                                          std::unique_ptr<Pooled<httplib::SSLServer>> server,
                                                          std::string_view flag) {
  return bind_and_serve(listen, std::move(server), flag);
}

HttpListener::~HttpListener() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace iogate
