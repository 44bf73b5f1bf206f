// Events: events.k8s.io/v1, with a core/v1 fallback for API servers that lack the group.
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/json_fields.h"
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

// What the API accepts (k8s.io/kubernetes pkg/apis/core/validation/events.go): reportingInstance
// at most 128 characters, the name a DNS subdomain of at most 253. Pod and Node names run to 253,
// so "iogate-preflight-<pod>" and "<pod>.<hex>" can exceed these: events.k8s.io/v1 refuses such
// an Event (422) and it is lost.
constexpr size_t kReportingInstanceMax = 128;
constexpr size_t kNameMax = 253;

// client-go's recorder names Events "<object name>.<hex UnixNano>", unique per object and
// instant; a name too long for that is cut, and the cut may not end in '-' or '.' (a DNS label
// ends alphanumeric).
std::string event_name(std::string base, std::chrono::system_clock::time_point now) {
  const std::string suffix =
      fmt::format(".{:x}", std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  if (base.size() + suffix.size() > kNameMax) {
    base.resize(kNameMax - suffix.size());
    while (!base.empty() && (base.back() == '-' || base.back() == '.')) base.pop_back();
  }
  return base + suffix;
}

std::string default_instance() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "iogate";
  return std::string("iogate-") + host;
}

}  // namespace

EventSpec event_about(std::string_view kind, const std::string& ns, const std::string& name,
                      const nlohmann::json& object, const EventText& text) {
  EventSpec event;
  event.ns = ns.empty() ? "default" : ns;
  event.regarding = {
      {"kind", kind}, {"apiVersion", "v1"}, {"name", name}, {"uid", string_at(object_at(object, "metadata"), "uid")}};
  if (!ns.empty()) event.regarding["namespace"] = ns;
  event.type = text.type;
  event.reason = text.reason;
  event.note = text.note;
  return event;
}

ApiStatus create_event(ApiClient& api, const EventSpec& event) {
  const auto now = std::chrono::system_clock::now();
  const std::string regarding_name = string_at(event.regarding, "name");
  const std::string name = event_name(regarding_name.empty() ? "iogate" : regarding_name, now);
  const std::string instance = truncate_utf8(
      event.reporting_instance.empty() ? default_instance() : event.reporting_instance, kReportingInstanceMax);
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
  // The name is unique to this process and instant, so AlreadyExists means an earlier attempt of
  // this very request was created and its answer lost (a dropped connection, then the retry).
  auto created = api.post("/apis/events.k8s.io/v1/namespaces/" + event.ns + "/events", v1);
  if (created.ok() || created.error().already_exists()) return Ok{};
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
  if (!legacy.ok() && !legacy.error().already_exists()) return legacy.error();
  return Ok{};
}

}  // namespace iogate
