// Events: events.k8s.io/v1, with a core/v1 fallback for API servers that lack the group.
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kube/json_fields.h"
#include "kube/operations.h"

namespace iogate {
namespace {

// The API caps note/message at 1 kB; cut at a UTF-8 character boundary.
std::string truncate_utf8(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string default_instance() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "iogate";
  return std::string("iogate-") + host;
}

}  // namespace

ApiStatus create_event(ApiClient& api, const EventSpec& event) {
  const auto now = std::chrono::system_clock::now();
  const std::string regarding_name = string_at(event.regarding, "name");
  // client-go's recorder: "<object name>.<hex UnixNano>", unique per object and instant.
  const std::string name = fmt::format(
      "{}.{:x}", regarding_name.empty() ? "iogate" : regarding_name,
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  const std::string instance = event.reporting_instance.empty() ? default_instance() : event.reporting_instance;
  const std::string note = truncate_utf8(event.note, 1024);

  nlohmann::json v1 = {{"apiVersion", "events.k8s.io/v1"},
                       {"kind", "Event"},
                       {"metadata", {{"name", name}, {"namespace", event.ns}}},
                       {"eventTime", rfc3339_micro(now)},
                       {"type", event.type},
                       {"reason", event.reason},
                       {"action", event.action},
                       {"note", note},
                       {"reportingController", event.reporting_controller},
                       {"reportingInstance", instance},
                       {"regarding", event.regarding}};
  auto created = api.post("/apis/events.k8s.io/v1/namespaces/" + event.ns + "/events", v1);
  if (created.ok()) return Ok{};
  if (!created.error().not_found()) return created.error();

  // No events.k8s.io (or the namespace is missing, in which case this 404s too and says so).
  spdlog::debug("kube: events.k8s.io/v1 not served ({}); posting a core/v1 Event", created.error().message);
  const std::string seconds = rfc3339_seconds(now);
  nlohmann::json core = {{"apiVersion", "v1"},
                         {"kind", "Event"},
                         {"metadata", {{"name", name}, {"namespace", event.ns}}},
                         {"involvedObject", event.regarding},
                         {"type", event.type},
                         {"reason", event.reason},
                         {"message", note},
                         {"action", event.action},
                         {"firstTimestamp", seconds},
                         {"lastTimestamp", seconds},
                         {"count", 1},
                         {"source", {{"component", event.reporting_controller}}},
                         {"reportingComponent", event.reporting_controller},
                         {"reportingInstance", instance}};
  auto legacy = api.post("/api/v1/namespaces/" + event.ns + "/events", core);
  if (!legacy.ok()) return legacy.error();
  return Ok{};
}

}  // namespace iogate
