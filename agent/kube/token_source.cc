#include "kube/token_source.h"

#include <spdlog/spdlog.h>

#include "base/text_file.h"

namespace iogate {

TokenSource::TokenSource(std::string static_token, std::string token_file, std::chrono::seconds max_age)
    : file_(std::move(token_file)), max_age_(max_age), token_(std::move(static_token)) {}

const std::string& TokenSource::token(Clock::time_point now) {
  if (!file_.empty() && (!loaded_ || now - loaded_at_ >= max_age_)) reload(now);
  return token_;
}

bool TokenSource::invalidate() {
  loaded_ = false;
  return !file_.empty();
}

void TokenSource::reload(Clock::time_point now) {
  // A failed re-read keeps the previous token (as client-go's cachingTokenSource does): a
  // transient error must not turn every request into a 401. The next request tries again.
  auto text = read_text_file(file_);
  std::string fresh = text.ok() ? trim_whitespace(*text) : std::string();
  if (fresh.empty()) {
    spdlog::warn("kube: cannot re-read token file: {}; keeping the previous token",
                 text.ok() ? file_ + " is empty" : text.error().message);
    return;
  }
  token_ = std::move(fresh);
  loaded_ = true;
  loaded_at_ = now;
}

}  // namespace iogate
