#include "kube/watch_stream.h"

#include <optional>

#include "base/json_fields.h"

namespace iogate {

std::optional<WatchEvent> parse_watch_event(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto object = j.find("object");
  if (object == j.end() || !object->is_object()) return std::nullopt;
  const std::string type = string_at(j, "type");
  WatchEvent e;
  if (type == "ADDED") {
    e.type = WatchEventType::kAdded;
  } else if (type == "MODIFIED") {
    e.type = WatchEventType::kModified;
  } else if (type == "DELETED") {
    e.type = WatchEventType::kDeleted;
  } else if (type == "BOOKMARK") {
    e.type = WatchEventType::kBookmark;
  } else if (type == "ERROR") {
    e.type = WatchEventType::kError;
  } else {
    return std::nullopt;
  }
  e.object = std::move(*object);
  return e;
}

bool watch_expired(const WatchEvent& e) {
  if (e.type != WatchEventType::kError) return false;
  auto code = e.object.find("code");
  return code != e.object.end() && code->is_number_integer() && code->get<int>() == 410;
}

WatchStream::WatchStream(std::string request_name, std::unique_ptr<BodyStream> body)
    : request_(std::move(request_name)), body_(std::move(body)) {}

WatchStream::Read WatchStream::next(std::chrono::milliseconds wait) {
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + wait;
  Read r;
  for (;;) {
    // A whole line first: the server may have sent several events in one chunk.
    for (size_t nl; (nl = buffer_.find('\n')) != std::string::npos;) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
      auto e = parse_watch_event(line);
      if (!e) {
        r.next = Next::kFailed;
        r.error = ApiError{request_, 200, "InvalidResponse", "a watch line that is not an event"};
        ended_ = true;
        return r;
      }
      r.next = Next::kEvent;
      r.event = std::move(*e);
      return r;
    }
    if (ended_) {
      r.next = Next::kEnded;
      return r;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    BodyStream::Chunk c = body_->next(std::max(left, std::chrono::milliseconds(0)));
    switch (c.read) {
      case BodyStream::Read::kData: buffer_ += c.bytes; break;
      case BodyStream::Read::kIdle: r.next = Next::kIdle; return r;
      case BodyStream::Read::kEnded:
        // A last event without its newline is still an event.
        if (buffer_.find_first_not_of(" \r\t") != std::string::npos) buffer_ += '\n';
        ended_ = true;
        break;
      case BodyStream::Read::kFailed:
        r.next = Next::kFailed;
        r.error = ApiError{request_, 0, "ConnectionLost", c.error.message};
        ended_ = true;
        buffer_.clear();
        return r;
    }
  }
}

}  // namespace iogate
