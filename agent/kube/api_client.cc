#include "kube/api_client.h"

#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace iogate {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

const char* content_type_of(PatchType type) {
  switch (type) {
    case PatchType::kMerge: return "application/merge-patch+json";
    case PatchType::kStrategicMerge: return "application/strategic-merge-patch+json";
    case PatchType::kJsonPatch: return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

std::string_view failure_reason(TransportFailure f) {
  switch (f) {
    case TransportFailure::kConnect: return "ConnectionFailed";
    case TransportFailure::kTimeout: return "Timeout";
    case TransportFailure::kConnectionLost: return "ConnectionLost";
    case TransportFailure::kTlsHandshake: return "TLSHandshake";
    case TransportFailure::kTlsVerification: return "TLSVerification";
  }
  return "TransportError";
}

bool retryable_failure(TransportFailure f) {
  // A peer that refused our TLS (an alert: client certificate, version, cipher) or a certificate
  // that does not verify will do so on the next try too: no retry storm. A handshake that timed
  // out or was cut is kTimeout or kConnectionLost (https_transport.cc), and retried.
  return f != TransportFailure::kTlsHandshake && f != TransportFailure::kTlsVerification;
}

TokenSource token_source_for(const KubeConfig& config) {
  if (config.exec) return TokenSource(*config.exec, ExecCluster{config.server, config.ca_pem});
  return TokenSource(config.token, config.token_file);
}

int64_t elapsed_ms(Clock::time_point since, Clock::time_point now) {
  return std::chrono::duration_cast<milliseconds>(now - since).count();
}

}  // namespace

ClientClock ClientClock::real() {
  return {[] { return Clock::now(); }, [](milliseconds d) { std::this_thread::sleep_for(d); }};
}

ApiClient::ApiClient(KubeConfig config, RetryPolicy retry)
    : ApiClient(std::move(config), retry, nullptr, ClientClock::real(), std::random_device{}()) {}

ApiClient::ApiClient(KubeConfig config, RetryPolicy retry, std::unique_ptr<Transport> transport, ClientClock clock,
                     uint64_t jitter_seed)
    : config_(std::move(config)),
      retry_(retry),
      transport_(std::move(transport)),
      clock_(std::move(clock)),
      rng_(jitter_seed),
      tokens_(token_source_for(config_)) {
  if (!transport_) {
    owns_transport_ = true;
    auto made = make_https_transport(config_);
    if (made.ok()) {
      transport_ = std::move(*made);
    } else {
      setup_error_ = made.error();
    }
  }
  if (retry_.max_attempts < 1) retry_.max_attempts = 1;
}

Status ApiClient::ready() const {
  if (setup_error_) return *setup_error_;
  return ok_status();
}

ApiResult<nlohmann::json> ApiClient::get(const std::string& path) { return call("GET", path, "", ""); }

ApiResult<nlohmann::json> ApiClient::patch(const std::string& path, PatchType type, const nlohmann::json& body,
                                           OnConflict on_conflict) {
  return call("PATCH", path, content_type_of(type), body.dump(), on_conflict);
}

ApiResult<nlohmann::json> ApiClient::post(const std::string& path, const nlohmann::json& body) {
  return call("POST", path, "application/json", body.dump());
}

milliseconds ApiClient::attempt_timeout(Clock::time_point now) const {
  if (deadline_ == Clock::time_point::max()) return retry_.request_timeout;
  return std::max(milliseconds(1),
                  std::min(retry_.request_timeout, std::chrono::duration_cast<milliseconds>(deadline_ - now)));
}

void ApiClient::say_whose_credential(ApiError& e) const {
  // A refused plugin token is otherwise a bare "401 Unauthorized": name where it came from.
  if (!config_.exec) return;
  e.message += fmt::format("{}the token of {} exec plugin \"{}\" was refused, also when run again",
                           e.message.empty() ? "" : "; ", config_.exec->user, config_.exec->command);
}

ApiResult<std::string> ApiClient::credential_for(const std::string& request_name, Clock::time_point now) {
  auto token = tokens_.token(now);
  if (!token.ok()) return ApiError{request_name, 0, "ExecCredential", token.error().message};
  // An exec plugin's new client certificate needs a new TLS client (client-go rotates its
  // connections the same way); a test's scripted transport is kept.
  if (owns_transport_ && !tokens_.client_cert_pem().empty() && tokens_.generation() != transport_generation_) {
    KubeConfig with_certificate = config_;
    with_certificate.client_cert_pem = tokens_.client_cert_pem();
    with_certificate.client_key_pem = tokens_.client_key_pem();
    auto made = make_https_transport(with_certificate);
    if (!made.ok()) {
      return ApiError{request_name, 0, "ExecCredential",
                      fmt::format("{} exec plugin \"{}\": {}", config_.exec ? config_.exec->user : "",
                                  config_.exec ? config_.exec->command : "", made.error().message)};
    }
    transport_ = std::move(*made);
    transport_generation_ = tokens_.generation();
  }
  return std::move(*token);
}

ApiResult<std::unique_ptr<WatchStream>> ApiClient::watch(const std::string& path) {
  const std::string request_name = "WATCH " + path;
  if (setup_error_) return ApiError{request_name, 0, "ClientSetup", setup_error_->message};
  if (stop_ && stop_->load())
    return ApiError{request_name, 0, "Stopped", "stopped by a signal before the request was sent"};
  HttpRequest request{"GET", path, "", "", ""};
  for (bool token_retried = false;;) {
    const Clock::time_point now = clock_.now();
    if (now >= deadline_) return ApiError{request_name, 0, "DeadlineExceeded", "deadline reached before the watch"};
    const milliseconds timeout = attempt_timeout(now);
    auto token = credential_for(request_name, now);
    if (!token.ok()) return token.error();
    request.bearer_token = std::move(*token);
    ++stats_.requests;
    StreamResult opened = transport_->open_stream(request, timeout);
    if (auto* failure = std::get_if<TransportError>(&opened)) {
      spdlog::debug("kube: {} failed: {}", request_name, failure->message);
      return ApiError{request_name, 0, std::string(failure_reason(failure->failure)), failure->message};
    }
    OpenedStream& o = std::get<OpenedStream>(opened);
    spdlog::debug("kube: {} {} ({} ms)", request_name, o.response.status, elapsed_ms(now, clock_.now()));
    if (o.body) return std::make_unique<WatchStream>(request_name, std::move(o.body));
    if (o.response.status == 401 && !token_retried && tokens_.can_refresh()) {
      token_retried = true;
      tokens_.invalidate();
      ++stats_.token_reloads;
      continue;
    }
    ApiError e = api_error_from_response(request_name, o.response.status, o.response.body);
    if (o.response.status == 401 && token_retried) say_whose_credential(e);
    return e;
  }
}

ApiResult<nlohmann::json> ApiClient::call(const std::string& method, const std::string& path,
                                          const std::string& content_type, std::string body, OnConflict on_conflict) {
  const std::string request_name = method + " " + path;
  if (setup_error_) return ApiError{request_name, 0, "ClientSetup", setup_error_->message};

  HttpRequest request{method, path, content_type, std::move(body), ""};
  const Clock::time_point started = clock_.now();
  bool token_retried = false;
  int attempt = 0;  // attempts made, the 401 re-authentication excluded
  ApiError last;

  auto deadline_error = [&](const ApiError* cause) {
    ApiError e{request_name, 0, "DeadlineExceeded",
               fmt::format("deadline reached after {} attempt{} in {} ms", attempt, attempt == 1 ? "" : "s",
                           elapsed_ms(started, clock_.now()))};
    if (cause) e.message += "; last: " + cause->summary().substr(request_name.size() + 2);
    return e;
  };

  auto stopped = [&] { return stop_ && stop_->load(); };
  for (;;) {
    if (stopped()) return ApiError{request_name, 0, "Stopped", "stopped by a signal before the request was sent"};
    Clock::time_point now = clock_.now();
    if (now >= deadline_) return deadline_error(attempt > 0 ? &last : nullptr);
    const milliseconds timeout = attempt_timeout(now);
    auto token = credential_for(request_name, now);
    if (!token.ok()) return token.error();
    request.bearer_token = std::move(*token);
    ++attempt;
    ++stats_.requests;
    TransportResult sent = transport_->send(request, timeout);
    Clock::time_point done = clock_.now();

    std::optional<std::chrono::seconds> retry_after;
    bool retry = false;
    if (auto* failure = std::get_if<TransportError>(&sent)) {
      last = ApiError{request_name, 0, std::string(failure_reason(failure->failure)), failure->message};
      spdlog::debug("kube: {} failed after {} ms: {}", request_name, elapsed_ms(now, done), failure->message);
      retry = retryable_failure(failure->failure);
    } else {
      HttpResponse& response = std::get<HttpResponse>(sent);
      spdlog::debug("kube: {} {} ({} ms)", request_name, response.status, elapsed_ms(now, done));
      if (response.status >= 200 && response.status < 300) {
        if (response.body.empty()) return nlohmann::json();
        auto json = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
        if (json.is_discarded()) {
          return ApiError{request_name, response.status, "InvalidResponse", "the answer is not JSON"};
        }
        return json;
      }
      last = api_error_from_response(request_name, response.status, response.body);
      if (response.status == 401 && token_retried) say_whose_credential(last);
      if (response.status == 401 && !token_retried && tokens_.can_refresh()) {
        // client-go's behaviour: a 401 may mean the token just rotated; re-read it, try once more.
        token_retried = true;
        tokens_.invalidate();
        ++stats_.token_reloads;
        --attempt;
        spdlog::info("kube: {}: 401 Unauthorized; {}; retrying once", request_name,
                     config_.exec ? "re-running the exec plugin" : "re-reading the token file");
        continue;
      }
      retry = transient_status(response.status) || (response.status == 409 && on_conflict == OnConflict::kRetry);
      if (response.status == 429 || response.status == 503) retry_after = parse_retry_after(response.retry_after);
    }

    if (!retry) return last;
    // With a deadline, it alone bounds the retries: a count would give up on a restarting server
    // (refused in a millisecond) long before a stalled one (10 s a try) with time left to wait.
    const bool has_deadline = deadline_ != Clock::time_point::max();
    if (!has_deadline && attempt >= retry_.max_attempts) {
      last.message += fmt::format(" (gave up after {} attempts)", attempt);
      return last;
    }
    milliseconds delay = backoff_delay(retry_, attempt, retry_after, rng_);
    if (has_deadline && done + delay >= deadline_) {
      // Sleeping past the deadline only to fail then: fail now, saying why.
      return deadline_error(&last);
    }
    std::string bound = has_deadline ? "" : fmt::format(" of {}", retry_.max_attempts - 1);
    std::string left = has_deadline ? fmt::format(", {} ms before the deadline", elapsed_ms(done, deadline_)) : "";
    spdlog::warn("kube: {}; retry {}{} in {} ms{}{}", last.summary(), attempt, bound, delay.count(),
                 retry_after ? " (Retry-After)" : "", left);
    ++stats_.retries;
    if (!stop_) {
      clock_.sleep(delay);
      continue;
    }
    for (milliseconds slept{0}; slept < delay && !stopped(); slept += milliseconds(50)) {
      clock_.sleep(std::min(milliseconds(50), delay - slept));
    }
  }
}

}  // namespace iogate
