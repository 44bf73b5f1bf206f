#include "kube/token_source.h"

#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/text_file.h"
#include "base/trim.h"

namespace iogate {

TokenSource::TokenSource(std::string static_token, std::string token_file, std::chrono::seconds max_age)
    : file_(std::move(token_file)), max_age_(max_age), token_(std::move(static_token)) {}

TokenSource::TokenSource(ExecPlugin plugin, ExecCluster cluster, ExecRunner runner)
    : plugin_(std::move(plugin)), cluster_(std::move(cluster)), runner_(std::move(runner)) {}

Result<std::string> TokenSource::token(Clock::time_point now) {
  if (plugin_) {
    // client-go: a credential is used until its expirationTimestamp; none means until a 401.
    const bool expired = expires_at_ && now >= *expires_at_;
    if (!loaded_ || expired) {
      if (Status s = run_plugin(now); !s.ok()) return s.error();
    }
    return credential_.token;
  }
  if (!file_.empty() && (!loaded_ || now - loaded_at_ >= max_age_)) reload(now);
  return token_;
}

bool TokenSource::invalidate() {
  loaded_ = false;
  return can_refresh();
}

Status TokenSource::run_plugin(Clock::time_point now) {
  // A failed run is the request's error: an expired or refused credential kept would only earn a
  // 401 that hides the plugin's own message.
  auto got = runner_(*plugin_, cluster_);
  if (!got.ok()) return got.error();
  credential_ = std::move(*got);
  expires_at_.reset();
  if (credential_.expiry) {
    auto left = *credential_.expiry - std::chrono::system_clock::now();
    expires_at_ = now + std::chrono::duration_cast<Clock::duration>(left);
  }
  loaded_ = true;
  loaded_at_ = now;
  ++generation_;
  spdlog::info("kube: {} exec plugin \"{}\" gave a {}{}", plugin_->user, plugin_->command,
               credential_.token.empty() ? "client certificate" : "token",
               credential_.expiry ? " valid until " + rfc3339_seconds(*credential_.expiry) : "");
  return ok_status();
}

void TokenSource::reload(Clock::time_point now) {
  // A failed re-read keeps the previous token (as client-go's cachingTokenSource does): a
  // transient error must not turn every request into a 401. The next request tries again.
  auto text = read_text_file(file_);
  std::string fresh = text.ok() ? std::string(trim_space(*text)) : std::string();
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
