// cpp-httplib's servers (0.11.4) with HttpWorkers in place of their fixed pool of threads, and the
// rules every iogate listener applies on top of cpp-httplib's:
//   - accepted sockets get TCP_NODELAY: an answer goes out as cpp-httplib writes it (headers, then
//     body), not after the client's delayed ACK of the first part (40 ms on Linux);
//   - the listen backlog is kListenBacklog, not cpp-httplib's 5, which drops connections (a SYN
//     retried after 1 s) as soon as a few clients connect at once;
//   - a kept-alive connection serves up to kKeepAliveRequests requests (cpp-httplib's 5 would
//     cost a new TLS handshake every 5 requests);
//   - a request whose body cannot be delimited for certain is answered at once and the
//     connection ended (request_framing_status, close_after_answer);
//   - every request is read through a BoundedStream (http/bounded_stream.h): its head within
//     RequestBounds as it arrives, its body within its length and the listener's budget of body
//     bytes in flight; a request past a bound is refused (414, 431, 413, 503) and the connection
//     ended.
// Descriptors at or past FD_SETSIZE are closed unserved: cpp-httplib waits on sockets with
// select(2), which cannot watch them (it would answer 500).
#pragma once

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <utility>

#include "http/bounded_stream.h"
#include "http/byte_budget.h"
#include "http/http_workers.h"

namespace iogate {

inline constexpr int kListenBacklog = 1024;  // the kernel caps it at net.core.somaxconn
inline constexpr size_t kKeepAliveRequests = 1000;

// A listener's limits; the servers' options say what each is for them.
struct HttpServing {
  // For the next bytes of a TLS handshake or a request once begun, and for a new connection's first
  // bytes (a wait that costs no worker).
  std::chrono::seconds read_timeout{10};
  std::chrono::seconds keep_alive_timeout{5};  // for the next request on a kept-alive connection
  int max_workers = 64;                        // HttpWorkerLimits
  int max_waiting = 128;
  RequestBounds requests;
};

template <class Base>  // httplib::Server or httplib::SSLServer
class Pooled : public Base {
 public:
  // `args` are Base's constructor's.
  template <class... Args>
  explicit Pooled(const HttpServing& serving, Args&&... args)
      : Base(std::forward<Args>(args)...),
        bounds_(serving.requests),
        bodies_(std::max(serving.requests.body_bytes_in_flight, serving.requests.max_body_bytes)),
        workers_(HttpWorkerLimits{serving.max_workers, serving.max_waiting, serving.read_timeout},
                 [this](int fd) { serve(fd); }) {
    // Run at once on the accepting thread, which then hands the socket to workers_ (below).
    struct Inline : httplib::TaskQueue {
      void enqueue(std::function<void()> fn) override { fn(); }
      void shutdown() override {}
    };
    this->new_task_queue = [] { return new Inline; };
    this->set_read_timeout(serving.read_timeout);
    this->set_write_timeout(serving.read_timeout);
    this->set_keep_alive_timeout(serving.keep_alive_timeout.count());
    this->set_keep_alive_max_count(kKeepAliveRequests);
  }
  ~Pooled() override = default;  // workers_ first: its threads end before Base goes

  // After binding: the backlog that cpp-httplib's listen(2) left at 5.
  void widen_backlog() { ::listen(this->svr_sock_, kListenBacklog); }
  HttpWorkerCounts counts() const { return workers_.counts(); }

 private:
  // cpp-httplib calls this (through the task queue) for every accepted socket.
  bool process_and_close_socket(socket_t sock) override;
  // On a worker: the handshake (TLS) and the requests, as Base::process_and_close_socket (private
  // there) does, ending also where a handler called close_after_answer().
  void serve(int fd);

  // The per-request callback of cpp-httplib's keep-alive loop around `process` (process_request
  // with its setup_request): the request read through a BoundedStream, and the loop ended where a
  // handler asked or a bound was hit (`drain` then: see drain_before_close).
  template <class Process>
  auto bounded_requests(Process process, bool& drain);

  std::mutex ssl_mutex_;  // SSLServer's SSL_new/SSL_free, as cpp-httplib guards them
  const RequestBounds bounds_;
  ByteBudget bodies_;    // body bytes held, all connections together
  HttpWorkers workers_;  // last member: destroyed first
};

using PooledServer = Pooled<httplib::Server>;
using PooledSslServer = Pooled<httplib::SSLServer>;
template <>
void Pooled<httplib::Server>::serve(int fd);
template <>
void Pooled<httplib::SSLServer>::serve(int fd);
extern template class Pooled<httplib::Server>;
extern template class Pooled<httplib::SSLServer>;

// RFC 9112 §6: 0 when the body of `req` can be delimited and fits; otherwise the status to answer
// at once, before reading any of it: 400 for a Content-Length that is not digits only or several
// that differ, or one with a Transfer-Encoding (so where the body ends is uncertain); 501 for a
// Transfer-Encoding other than chunked; 413 for a Content-Length over `max_body`.
int request_framing_status(const httplib::Request& req, size_t max_body);

// The body bytes `req` may send: its Content-Length where request_framing_status finds no fault,
// `max_body` for a chunked one, 0 otherwise (the route answers without reading a body).
size_t body_allowance(const httplib::Request& req, size_t max_body);

// Ends the connection once this answer is written (and says so in a Connection header): for an
// answer given without reading the request's body, whose bytes would otherwise be taken for the
// next request. What the client still sends is then read and dropped for up to 2 s, so that it
// reads the answer rather than a reset. Only from a handler of a Pooled server, on the thread that
// serves the request.
void close_after_answer(httplib::Response& res);

}  // namespace iogate
