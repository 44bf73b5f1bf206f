// How long to wait before retrying an API request: exponential backoff with full jitter, or the
// server's Retry-After. Pure functions of their inputs, so the schedule is testable without clocks.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "base/rng.h"

namespace iogate {

struct RetryPolicy {
  // Tries of one request, the first included, by a client without a deadline. With one
  // (ApiClient::set_deadline), transient failures are retried until it instead.
  int max_attempts = 6;
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
  // Each wait of one attempt (connect, TLS handshake step, write, read); the client's deadline
  // shortens it further. client-go's TLS handshake timeout: a stalled server costs a try 10 s, so
  // a 60 s deadline still holds several tries, and one that resumes is answered on the try
  // waiting then (its request queued) or within 10 s + max_backoff.
  std::chrono::milliseconds request_timeout{10000};
};

// The sleep before retry `retry` (1 = the first retry). With Retry-After from the server: exactly
// that (it knows its own load; priority-and-fairness sends it with 429). Otherwise full jitter
// (uniform in [0, min(max_backoff, initial_backoff * 2^(retry-1))]), so many clients hit by the same
// outage spread out instead of retrying in lockstep.
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int retry,
                                        std::optional<std::chrono::seconds> retry_after, FastRng& rng);

// A Retry-After header in its delay-seconds form ("3"); std::nullopt for the HTTP-date form,
// which the API server never sends, and for anything unparseable.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view header);

}  // namespace iogate
