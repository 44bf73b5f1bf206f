#include "http/pooled_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>

namespace iogate {
namespace {

// Set by close_after_answer() on the thread serving the request, read after it is answered.
thread_local bool close_requested = false;

// After an answer given without reading the request's body the client may still be sending it,
// and closing with unread bytes makes the kernel send a reset, which can destroy the answer before
// the client reads it (a client that writes its whole body before reading never sees a 413). So:
// no more writes, then what arrives is read and dropped until the client closes too, for at most
// kLinger (nginx's lingering_close, the same idea).
constexpr std::chrono::milliseconds kLinger{2000};

void drain_before_close(int sock) {
  ::shutdown(sock, SHUT_WR);
  auto end = std::chrono::steady_clock::now() + kLinger;
  char buf[16 * 1024];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    pollfd p{sock, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
    if (::recv(sock, buf, sizeof buf, MSG_DONTWAIT) <= 0) return;  // the client's FIN, or gone
  }
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

template <class Base>
bool Pooled<Base>::process_and_close_socket(socket_t sock) {
  if (sock >= FD_SETSIZE) {
    ::close(sock);
    return false;
  }
  int yes = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  workers_.admit(sock);
  return true;
}

template <class Base>
template <class Process>
auto Pooled<Base>::bounded_requests(Process process, bool& drain) {
  return [this, process, &drain](httplib::Stream& strm, bool close_connection, bool& connection_closed) {
    BoundedStream bounded(strm, bounds_, bodies_);  // its share of bodies_ held until the answer is written
    close_requested = false;
    bool ok = process(bounded, close_connection, connection_closed,
                      [&](httplib::Request& req) { bounded.start_body(body_allowance(req, bounds_.max_body_bytes)); });
    if (close_requested || bounded.tripped()) connection_closed = drain = true;
    return ok;
  };
}

template <>
void Pooled<httplib::Server>::serve(int sock) {
  bool drain = false;
  httplib::detail::process_server_socket(
      svr_sock_, sock, keep_alive_max_count_, keep_alive_timeout_sec_, read_timeout_sec_, read_timeout_usec_,
      write_timeout_sec_, write_timeout_usec_,
      bounded_requests(
          [this](httplib::Stream& strm, bool close_connection, bool& connection_closed, auto start_body) {
            return process_request(strm, close_connection, connection_closed, start_body);
          },
          drain));
  if (drain) drain_before_close(sock);
  httplib::detail::shutdown_socket(sock);
  httplib::detail::close_socket(sock);
}

template <>
void Pooled<httplib::SSLServer>::serve(int sock) {
  SSL* ssl = httplib::detail::ssl_new(
      sock, ssl_context(), ssl_mutex_,
      [&](SSL* s) {
        return httplib::detail::ssl_connect_or_accept_nonblocking(sock, s, SSL_accept, read_timeout_sec_,
                                                                  read_timeout_usec_);
      },
      [](SSL*) { return true; });
  if (ssl) {
    bool drain = false;
    bool ok = httplib::detail::process_server_socket_ssl(
        svr_sock_, ssl, sock, keep_alive_max_count_, keep_alive_timeout_sec_, read_timeout_sec_, read_timeout_usec_,
        write_timeout_sec_, write_timeout_usec_,
        bounded_requests(
            [this, ssl](httplib::Stream& strm, bool close_connection, bool& connection_closed, auto start_body) {
              return process_request(strm, close_connection, connection_closed,
                                     [ssl, start_body](httplib::Request& req) {
                                       req.ssl = ssl;
                                       start_body(req);
                                     });
            },
            drain));
    // close_notify after an answer, ours included, and only when the client is still there.
    httplib::detail::ssl_delete(ssl_mutex_, ssl, ok || drain);
    if (drain) drain_before_close(sock);  // the rest of the request, still encrypted: dropped unread
  }
  httplib::detail::shutdown_socket(sock);
  httplib::detail::close_socket(sock);
}

template class Pooled<httplib::Server>;
template class Pooled<httplib::SSLServer>;

int request_framing_status(const httplib::Request& req, size_t max_body) {
  bool chunked = false;
  if (req.has_header("Transfer-Encoding")) {
    if (req.get_header_value_count("Transfer-Encoding") != 1) return 501;
    const std::string& coding = req.get_header_value("Transfer-Encoding");
    if (strcasecmp(coding.c_str(), "chunked") != 0) return 501;
    chunked = true;
  }
  size_t lengths = req.get_header_value_count("Content-Length");
  if (lengths == 0) return 0;
  if (chunked) return 400;
  const std::string first = req.get_header_value("Content-Length", 0);
  for (size_t i = 0; i < lengths; ++i) {
    const std::string value = req.get_header_value("Content-Length", i);
    if (!all_digits(value) || value != first) return 400;
  }
  // Compared as text: no digits string overflows.
  std::string digits = first.substr(std::min(first.find_first_not_of('0'), first.size()));
  std::string limit = std::to_string(max_body);
  if (digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit)) return 413;
  return 0;
}

size_t body_allowance(const httplib::Request& req, size_t max_body) {
  if (request_framing_status(req, max_body) != 0) return 0;
  if (req.has_header("Content-Length"))
    return std::stoull(req.get_header_value("Content-Length"));  // digits, <= max_body
  return req.has_header("Transfer-Encoding") ? max_body : 0;
}

void close_after_answer(httplib::Response& res) {
  res.set_header("Connection", "close");
  close_requested = true;
}

}  // namespace iogate
