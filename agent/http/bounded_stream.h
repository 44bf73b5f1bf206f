// One request's bytes held to its listener's bounds as they arrive; http/pooled_server.h reads
// every request through one.
//
// cpp-httplib 0.11.4 reads the request line and each header line into a string that grows until
// the line ends, compares its length with CPPHTTPLIB_REQUEST_URI_MAX_LENGTH or
// CPPHTTPLIB_HEADER_MAX_LENGTH only then, and counts no header lines at all: a client sending one
// endless line, or endless short ones, had all of it held in memory (160 MiB of header line took
// the webhook to 263 MiB). Its macros cannot help (they are checked after the line is read), so the
// head is counted here, as cpp-httplib reads it, and refused at the first byte past a bound:
//   - a request line longer than CPPHTTPLIB_REQUEST_URI_MAX_LENGTH: 414;
//   - a header line longer than CPPHTTPLIB_HEADER_MAX_LENGTH, more than max_header_fields lines,
//     or more than max_head_bytes in all: 431.
// The body that follows (start_body) may be as long as the request says, at most max_body_bytes,
// and holds a share of the listener's ByteBudget as large: taken at the body's first byte (a
// request answered without its body takes none), given back once the request is answered (the
// route's own copies of the body live that long). More bytes than that: 413; no room within
// body_wait: 503 with Retry-After (kBusyRetryAfterSeconds).
// A refusal is written at once, with "Connection: close"; reads and writes fail from then on, so
// cpp-httplib ends the connection without an answer of its own.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "http/byte_budget.h"

namespace iogate {

// What a 503 for want of room in a budget says in Retry-After: room comes back as the requests
// before it are answered, and a client that honours it (the API server's webhook client does,
// within its timeout) calls again instead of failing.
inline constexpr int kBusyRetryAfterSeconds = 1;

struct RequestBounds {
  // The request line and headers: Go's net/http takes 1 MiB, nginx 32 KiB, Node.js 16 KiB; the
  // API server, kubelet probes and Prometheus send well under 1 KiB.
  size_t max_head_bytes = 16 * 1024;
  int max_header_fields = 100;  // Apache's LimitRequestFields
  // The longest body a route of the listener reads (0: none), and the bytes of bodies that all its
  // connections together may hold (at least max_body_bytes).
  size_t max_body_bytes = 0;
  size_t body_bytes_in_flight = 0;
  std::chrono::milliseconds body_wait{5000};  // for room in the budget, before a 503
};

class BoundedStream : public httplib::Stream {
 public:
  // `bodies` outlives the stream: the listener's budget for body bytes.
  BoundedStream(httplib::Stream& inner, const RequestBounds& bounds, ByteBudget& bodies)
      : inner_(inner), bounds_(bounds), bodies_(bodies) {}

  // The head has been read (cpp-httplib's setup_request): at most `allowed` bytes of body follow.
  void start_body(size_t allowed);
  // A bound was hit: its refusal has been written and the connection must end.
  bool tripped() const { return tripped_; }

  bool is_readable() const override { return !tripped_ && inner_.is_readable(); }
  bool is_writable() const override { return !tripped_ && inner_.is_writable(); }
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override { inner_.get_remote_ip_and_port(ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { inner_.get_local_ip_and_port(ip, port); }
  socket_t socket() const override { return inner_.socket(); }

 private:
  // Counts head bytes; false once past a bound (then tripped).
  bool count_head(const char* bytes, size_t n);
  void trip(int status, std::string_view text);

  httplib::Stream& inner_;
  const RequestBounds& bounds_;
  ByteBudget& bodies_;
  bool tripped_ = false;
  bool in_body_ = false;
  size_t head_bytes_ = 0, line_bytes_ = 0;
  int lines_ = 0, fields_ = 0;  // lines ended so far (the request line included), header lines among them
  char last_ = 0;
  size_t body_allowed_ = 0, body_read_ = 0;
  ByteBudget::Lease body_lease_;
};

}  // namespace iogate
