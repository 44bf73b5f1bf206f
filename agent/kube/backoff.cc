#include "kube/backoff.h"

#include <algorithm>
#include <charconv>

#include "base/trim.h"

namespace iogate {

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int retry,
                                        std::optional<std::chrono::seconds> retry_after, FastRng& rng) {
  if (retry_after) return std::chrono::duration_cast<std::chrono::milliseconds>(*retry_after);
  int64_t cap = std::max<int64_t>(policy.max_backoff.count(), 0);
  int64_t ceiling = std::max<int64_t>(policy.initial_backoff.count(), 0);
  for (int i = 1; i < retry && ceiling < cap; ++i) ceiling *= 2;  // doubling stops at the cap: no overflow
  ceiling = std::min(ceiling, cap);
  return std::chrono::milliseconds(static_cast<int64_t>(rng.below(static_cast<uint64_t>(ceiling) + 1)));
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view header) {
  header = trim_space(header);
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), seconds);
  if (ec != std::errc() || end != header.data() + header.size() || seconds < 0) return std::nullopt;
  return std::chrono::seconds(seconds);
}

}  // namespace iogate
