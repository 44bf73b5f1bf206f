#include "http/bounded_stream.h"

#include <fmt/format.h>

namespace iogate {

void BoundedStream::start_body(size_t allowed) {
  in_body_ = true;
  body_allowed_ = allowed;
}

ssize_t BoundedStream::read(char* ptr, size_t size) {
  if (tripped_) return -1;
  if (!in_body_) {
    ssize_t n = inner_.read(ptr, size);
    if (n > 0 && !count_head(ptr, static_cast<size_t>(n))) return -1;
    return n;
  }
  if (!body_lease_.held()) {
    body_lease_ = bodies_.acquire(body_allowed_, bounds_.body_wait);
    if (!body_lease_.held()) {
      trip(503,
           fmt::format("busy: more than {} bytes of request bodies are being served; retry\n", bodies_.capacity()));
      return -1;
    }
  }
  ssize_t n = inner_.read(ptr, size);
  if (n > 0 && (body_read_ += static_cast<size_t>(n)) > body_allowed_) {
    trip(413, fmt::format("request body over {} bytes\n", body_allowed_));
    return -1;
  }
  return n;
}

bool BoundedStream::count_head(const char* bytes, size_t n) {
  auto too_large = [&] {
    trip(431, fmt::format("request header fields too large: at most {} lines of {} bytes, {} bytes in all\n",
                          bounds_.max_header_fields, CPPHTTPLIB_HEADER_MAX_LENGTH, bounds_.max_head_bytes));
    return false;
  };
  for (size_t i = 0; i < n; ++i) {
    char c = bytes[i];
    ++head_bytes_;
    ++line_bytes_;
    if (lines_ == 0 && line_bytes_ > CPPHTTPLIB_REQUEST_URI_MAX_LENGTH) {
      trip(414, fmt::format("request line over {} bytes\n", CPPHTTPLIB_REQUEST_URI_MAX_LENGTH));
      return false;
    }
    if ((lines_ > 0 && line_bytes_ > CPPHTTPLIB_HEADER_MAX_LENGTH) || head_bytes_ > bounds_.max_head_bytes) {
      return too_large();
    }
    if (c == '\n') {
      bool blank = line_bytes_ == 1 || (line_bytes_ == 2 && last_ == '\r');  // the head's end
      if (lines_ > 0 && !blank && ++fields_ > bounds_.max_header_fields) return too_large();
      ++lines_;
      line_bytes_ = 0;
    }
    last_ = c;
  }
  return true;
}

void BoundedStream::trip(int status, std::string_view text) {
  std::string retry = status == 503 ? fmt::format("Retry-After: {}\r\n", kBusyRetryAfterSeconds) : "";
  std::string answer = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n"
      "{}Connection: close\r\n\r\n{}",
      status, httplib::detail::status_message(status), text.size(), retry, text);
  for (size_t done = 0; done < answer.size();) {
    ssize_t n = inner_.write(answer.data() + done, answer.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  tripped_ = true;
}

ssize_t BoundedStream::write(const char* ptr, size_t size) { return tripped_ ? -1 : inner_.write(ptr, size); }

}  // namespace iogate
