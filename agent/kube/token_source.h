// The credential for the next request: a static token, a token file or an exec plugin.
//
// Bound service-account tokens expire and the kubelet rotates them by swapping a `..data` symlink
// under the token's path, so a token file is re-opened by path when the cached copy is older than
// a minute and right after a 401 (client-go does both). An exec plugin (kube/exec_plugin.h) runs
// on the first request, again once its credential's expirationTimestamp has passed, and right
// after a 401 (client-go's exec authenticator does the same); its credential is cached between.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/result.h"
#include "kube/exec_plugin.h"

namespace iogate {

class TokenSource {
 public:
  using Clock = std::chrono::steady_clock;
  // What a plugin run gives; tests substitute a scripted one.
  using ExecRunner = std::function<Result<ExecCredential>(const ExecPlugin&, const ExecCluster&)>;

  // `token_file` wins over `static_token` when both are set; the static one then stands in only
  // while the file has never been readable.
  TokenSource(std::string static_token, std::string token_file,
              std::chrono::seconds max_age = std::chrono::seconds(60));
  // An exec plugin. Its expirationTimestamp is wall-clock time, turned into `Clock` time when the
  // plugin answers (so a fake steady clock in tests moves it too).
  TokenSource(ExecPlugin plugin, ExecCluster cluster, ExecRunner runner = run_exec_plugin);

  // The bearer token for a request at `now`; "" when there is none (client-certificate
  // authentication). An error only from an exec plugin that failed with no valid credential cached.
  Result<std::string> token(Clock::time_point now);

  // The exec plugin's client certificate and key ("" for none), current as of the last token().
  const std::string& client_cert_pem() const { return credential_.client_cert_pem; }
  const std::string& client_key_pem() const { return credential_.client_key_pem; }
  // Rises with every credential a plugin gives: a new client certificate needs a new connection.
  uint64_t generation() const { return generation_; }

  // After a 401: the next token() re-opens the file or re-runs the plugin. False when there is
  // nothing to refresh (a static token).
  bool invalidate();

  bool can_refresh() const { return !file_.empty() || plugin_.has_value(); }

 private:
  void reload(Clock::time_point now);
  Status run_plugin(Clock::time_point now);

  std::string file_;
  std::chrono::seconds max_age_{60};
  std::string token_;
  bool loaded_ = false;
  Clock::time_point loaded_at_{};

  std::optional<ExecPlugin> plugin_;
  ExecCluster cluster_;
  ExecRunner runner_;
  ExecCredential credential_;
  std::optional<Clock::time_point> expires_at_;  // of credential_, when the plugin said
  uint64_t generation_ = 0;
};

}  // namespace iogate
