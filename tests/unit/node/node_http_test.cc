// The node agent's HTTP server on 127.0.0.1: idle connections cost it no worker, what is not a
// GET is refused before any body is read, and answers leave at once (TCP_NODELAY).
#include <doctest/doctest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "http/loopback_sockets.h"
#include "node/node_http.h"

using namespace iogate;
using namespace std::chrono_literals;

namespace {

NodeHttpHandlers handlers() {
  NodeHttpHandlers h;
  h.metrics = [] { return HttpAnswer{200, "text/plain; version=0.0.4", "iogate_up 1\n"}; };
  h.healthz = [] { return HttpAnswer{200, "text/plain; charset=utf-8", "ok"}; };
  h.readyz = h.healthz;
  h.report = [] { return HttpAnswer{503, "text/plain; charset=utf-8", "no round yet\n"}; };
  return h;
}

std::unique_ptr<NodeHttpServer> start() {
  auto s = NodeHttpServer::start("127.0.0.1:0", handlers());
  REQUIRE_MESSAGE(s.ok(), s.error().message);
  return std::move(*s);
}

int port_of(const NodeHttpServer& s) { return std::stoi(s.address().substr(s.address().rfind(':') + 1)); }

// An idle connection that gives up a read after 5 s.
UniqueFd connect_to(int port) {
  UniqueFd fd = idle_connection(port);
  timeval tv{5, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// Writes `request`, reads until the server closes (or 5 s pass): the answer's status line, and
// whether the server ended the connection.
std::pair<std::string, bool> exchange_until_close(const UniqueFd& fd, const std::string& request) {
  REQUIRE(write(fd.get(), request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string answer;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd.get(), buf, sizeof buf)) > 0) answer.append(buf, static_cast<size_t>(n));
  return {answer.substr(0, answer.find("\r\n")), n == 0};
}

}  // namespace

TEST_CASE("node http: idle connections hold no worker; a scrape is answered while 16 stay open") {
  auto server = start();
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 16; ++i) idle.push_back(connect_to(port_of(*server)));
  httplib::Client c("127.0.0.1", port_of(*server));
  c.set_read_timeout(3s);
  c.set_connection_timeout(3s);
  for (const char* path : {"/metrics", "/healthz", "/readyz"}) {
    auto res = c.Get(path);
    REQUIRE(res);
    CHECK(res->status == 200);
  }
  for (const auto& fd : idle) CHECK(still_open(fd));  // answered in their presence, not after them
}

TEST_CASE("node http: what is not a GET is refused before its body is read, and the connection ends") {
  auto server = start();
  for (std::string length : {"5", "-5", "1e20", "99999999999999999999"}) {
    CAPTURE(length);
    UniqueFd fd = connect_to(port_of(*server));
    auto [status, closed] =
        exchange_until_close(fd, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + "\r\n\r\n");
    CHECK(status == "HTTP/1.1 405 Method Not Allowed");
    CHECK(closed);
  }
  UniqueFd fd = connect_to(port_of(*server));
  auto [status, closed] = exchange_until_close(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(status == "HTTP/1.1 200 OK");
  CHECK(closed);
}

TEST_CASE("node http: accepted connections have TCP_NODELAY") {
  auto server = start();
  int port = port_of(*server);
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  auto res = c.Get("/healthz");
  REQUIRE(res);
  auto nodelay = accepted_nodelay(port);
  REQUIRE(nodelay.size() == 1);  // the keep-alive connection, still served
  CHECK(nodelay[0]);
}
