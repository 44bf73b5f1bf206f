// The bearer token for the next request. Bound service-account tokens expire and the kubelet
// rotates them by swapping a `..data` symlink under the token's path, so a token file is re-opened
// by path when the cached copy is older than a minute and right after a 401 (client-go does both).
#pragma once

#include <chrono>
#include <string>

namespace iogate {

class TokenSource {
 public:
  using Clock = std::chrono::steady_clock;

  // `token_file` wins over `static_token` when both are set; the static one then stands in only
  // while the file has never been readable.
  TokenSource(std::string static_token, std::string token_file,
              std::chrono::seconds max_age = std::chrono::seconds(60));

  // "" when there is none (client-certificate authentication).
  const std::string& token(Clock::time_point now);

  // After a 401: the next token() re-opens the file. False when there is no file to re-read.
  bool invalidate();

  bool has_file() const { return !file_.empty(); }

 private:
  void reload(Clock::time_point now);

  std::string file_;
  std::chrono::seconds max_age_;
  std::string token_;
  bool loaded_ = false;
  Clock::time_point loaded_at_{};
};

}  // namespace iogate
