// The bounds every listener applies to what a request sends (http/bounded_stream.h), on a Pooled
// plain-HTTP server on 127.0.0.1 driven by raw sockets: the head refused at the first byte past a
// bound, bodies held to their length and to the listener's budget of body bytes.
#include <doctest/doctest.h>
#include <httplib.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "base/unique_fd.h"
#include "http/listener.h"
#include "http/loopback_sockets.h"
#include "http/pooled_server.h"

using namespace iogate;
using namespace std::chrono_literals;

namespace {

constexpr size_t kMaxBody = 1000;

// A route that holds its request (and so its share of the body budget) until released.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false, entered = false;
  void wait() {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait_for(lock, 10s, [&] { return open; });
  }
  bool wait_entered() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, 10s, [&] { return entered; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

struct Server {
  std::unique_ptr<HttpListener> listener;
  int port = 0;
  explicit Server(Gate& gate) {
    HttpServing serving;
    serving.requests.max_body_bytes = kMaxBody;
    serving.requests.body_bytes_in_flight = kMaxBody;  // one body at a time
    serving.requests.body_wait = 200ms;
    auto pooled = std::make_unique<PooledServer>(serving);
    pooled->Get("/ok", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
    pooled->Post("/echo", [](const httplib::Request&, httplib::Response& res, const httplib::ContentReader& read) {
      std::string body;
      if (read([&](const char* d, size_t n) { return body.append(d, n), true; })) res.set_content(body, "text/plain");
    });
    pooled->Post("/hold", [&gate](const httplib::Request&, httplib::Response& res, const httplib::ContentReader& read) {
      read([](const char*, size_t) { return true; });
      gate.wait();
      res.set_content("held", "text/plain");
    });
    auto l = HttpListener::start("127.0.0.1:0", std::move(pooled));
    REQUIRE_MESSAGE(l.ok(), l.error().message);
    listener = std::move(*l);
    port = listener->port();
  }
};

UniqueFd connect_to(int port) {
  UniqueFd fd = idle_connection(port);
  timeval tv{5, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

bool readable(const UniqueFd& fd) {
  pollfd p{fd.get(), POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

// Sends `head`, then `piece` over and over (at most `most` bytes in all), then `tail`, stopping as
// soon as the server answers or hangs up; then reads to the end. The status line, and whether the
// server ended the connection.
std::pair<std::string, bool> push(int port, const std::string& head, const std::string& piece = "", size_t most = 0,
                                  const std::string& tail = "") {
  UniqueFd fd = connect_to(port);
  auto send_all = [&](const std::string& s) {
    for (size_t done = 0; done < s.size();) {
      ssize_t n = send(fd.get(), s.data() + done, s.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  };
  bool sending = send_all(head);
  for (size_t sent = head.size(); sending && !piece.empty() && sent < most && !readable(fd); sent += piece.size()) {
    sending = send_all(piece);
  }
  if (sending && !readable(fd)) send_all(tail);
  std::string answer;
  char buf[4096];
  ssize_t n;
  while ((n = recv(fd.get(), buf, sizeof buf, 0)) > 0) {
    answer.append(buf, static_cast<size_t>(n));
    // A kept-alive answer: whole once its body (Content-Length) is in.
    size_t end = answer.find("\r\n\r\n"), at = answer.find("Content-Length: ");
    if (end != std::string::npos && at < end && answer.size() >= end + 4 + std::stoul(answer.substr(at + 16))) {
      if (answer.find("Connection: close") == std::string::npos) return {answer.substr(0, answer.find("\r\n")), false};
    }
  }
  return {answer.substr(0, answer.find("\r\n")), n == 0 || (n < 0 && errno == ECONNRESET)};
}

std::string fields(int count) {
  std::string s;
  for (int i = 0; i < count; ++i) s += "X-F" + std::to_string(i) + ": v\r\n";
  return s;
}

}  // namespace

TEST_CASE("request bounds: an endless request line gets 414 as it arrives, and the connection ends") {
  Gate gate;
  Server server(gate);
  auto [status, closed] = push(server.port, "GET /", std::string(4096, 'a'), 64 << 20);
  CHECK(status == "HTTP/1.1 414 URI Too Long");
  CHECK(closed);
  // The longest request line cpp-httplib takes (its own limit, counted with the CRLF) is served.
  std::string target = "/ok?" + std::string(CPPHTTPLIB_REQUEST_URI_MAX_LENGTH - 19, 'a');
  std::string line = "GET " + target + " HTTP/1.1\r\n";
  REQUIRE(line.size() == CPPHTTPLIB_REQUEST_URI_MAX_LENGTH);
  CHECK(push(server.port, line + "Connection: close\r\n\r\n").first == "HTTP/1.1 200 OK");
}

TEST_CASE("request bounds: endless header lines, too many or too much of them: 431, and the connection ends") {
  Gate gate;
  Server server(gate);
  SUBCASE("one endless line") {
    auto [status, closed] = push(server.port, "GET /ok HTTP/1.1\r\nX-Long: ", std::string(4096, 'a'), 64 << 20);
    CHECK(status == "HTTP/1.1 431 Request Header Fields Too Large");
    CHECK(closed);
  }
  SUBCASE("endless short lines") {
    auto [status, closed] = push(server.port, "GET /ok HTTP/1.1\r\n", fields(100), 64 << 20);
    CHECK(status == "HTTP/1.1 431 Request Header Fields Too Large");
    CHECK(closed);
  }
  SUBCASE("lines cpp-httplib skips (no CR) count too") {
    auto [status, closed] = push(server.port, "GET /ok HTTP/1.1\r\n", std::string(1000, '\n'), 64 << 20);
    CHECK(status == "HTTP/1.1 431 Request Header Fields Too Large");
    CHECK(closed);
  }
  SUBCASE("max_header_fields lines are served, one more is not") {
    RequestBounds bounds;
    CHECK(push(server.port, "GET /ok HTTP/1.1\r\nConnection: close\r\n" + fields(bounds.max_header_fields - 1) + "\r\n")
              .first == "HTTP/1.1 200 OK");
    CHECK(push(server.port, "GET /ok HTTP/1.1\r\nConnection: close\r\n" + fields(bounds.max_header_fields) + "\r\n")
              .first == "HTTP/1.1 431 Request Header Fields Too Large");
  }
  SUBCASE("a line of CPPHTTPLIB_HEADER_MAX_LENGTH is served, a longer one is not") {
    std::string name = "X-Long: ";
    std::string value(CPPHTTPLIB_HEADER_MAX_LENGTH - name.size() - 2, 'a');
    std::string head = "GET /ok HTTP/1.1\r\nConnection: close\r\n";
    CHECK(push(server.port, head + name + value + "\r\n\r\n").first == "HTTP/1.1 200 OK");
    CHECK(push(server.port, head + name + value + "a\r\n\r\n").first == "HTTP/1.1 431 Request Header Fields Too Large");
  }
  SUBCASE("lines within their limits, past max_head_bytes in all") {
    std::string line = "X-Long: " + std::string(4000, 'a') + "\r\n";
    std::string head = "GET /ok HTTP/1.1\r\nConnection: close\r\n";
    CHECK(push(server.port, head + line + line + line + "\r\n").first == "HTTP/1.1 200 OK");  // 12 KB
    CHECK(push(server.port, head + line + line + line + line + line + "\r\n").first ==
          "HTTP/1.1 431 Request Header Fields Too Large");  // 20 KB
  }
}

TEST_CASE("request bounds: each request on a kept-alive connection is counted afresh") {
  Gate gate;
  Server server(gate);
  UniqueFd fd = connect_to(server.port);
  std::string request = "GET /ok HTTP/1.1\r\n" + fields(80) + "\r\n";
  for (int i = 0; i < 3; ++i) {
    REQUIRE(send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));
    std::string answer;
    char buf[4096];
    while (answer.find("\r\n\r\nok") == std::string::npos) {
      ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
      REQUIRE(n > 0);
      answer.append(buf, static_cast<size_t>(n));
    }
    CHECK(answer.rfind("HTTP/1.1 200 OK", 0) == 0);
  }
}

TEST_CASE("request bounds: a chunked body past max_body_bytes gets 413 as it arrives") {
  Gate gate;
  Server server(gate);
  std::string head = "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  CHECK(push(server.port, head + "5\r\nhello\r\n0\r\n\r\n").first == "HTTP/1.1 200 OK");
  auto [status, closed] = push(server.port, head, "64\r\n" + std::string(100, 'x') + "\r\n", 64 << 20);
  CHECK(status == "HTTP/1.1 413 Payload Too Large");
  CHECK(closed);
  // An endless chunk-size line is a body past its length too.
  auto endless = push(server.port, head + "1;", std::string(4096, 'a'), 64 << 20);
  CHECK(endless.first == "HTTP/1.1 413 Payload Too Large");
  CHECK(endless.second);
}

TEST_CASE("request bounds: a body waits for room in the budget of body bytes; 503 when none comes") {
  Gate gate;
  Server server(gate);
  std::atomic<bool> held_answered{false};
  std::thread holder([&] {
    auto r = push(server.port,
                  "POST /hold HTTP/1.1\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n" + std::string(1000, 'x'));
    held_answered = r.first == "HTTP/1.1 200 OK";
  });
  REQUIRE(gate.wait_entered());  // its 1000 bytes (the whole budget) are held until it is answered
  std::string post = "POST /echo HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi";
  auto [status, closed] = push(server.port, post);
  CHECK(status == "HTTP/1.1 503 Service Unavailable");
  CHECK(closed);
  {  // It says when to call again.
    UniqueFd fd = connect_to(server.port);
    REQUIRE(send(fd.get(), post.data(), post.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(post.size()));
    std::string answer;
    char buf[4096];
    for (ssize_t n; (n = recv(fd.get(), buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
    CHECK(answer.find("\r\nRetry-After: " + std::to_string(kBusyRetryAfterSeconds) + "\r\n") != std::string::npos);
  }
  // A request without a body needs no room.
  CHECK(push(server.port, "GET /ok HTTP/1.1\r\nConnection: close\r\n\r\n").first == "HTTP/1.1 200 OK");
  gate.release();
  holder.join();
  CHECK(held_answered);
  CHECK(push(server.port, post).first == "HTTP/1.1 200 OK");  // room again
}
