#include "cli/api_connection.h"

#include <fmt/format.h>

#include "base/quote.h"
#include "base/units.h"
#include "kube/connect.h"

namespace iogate {

Result<std::unique_ptr<ApiClient>> one_shot_api(const boost::program_options::variables_map& flags,
                                                std::chrono::milliseconds timeout) {
  auto flag = [&](const char* name) { return flags.count(name) ? flags[name].as<std::string>() : std::string(); };
  ApiConnectOptions o;
  o.kubeconfig = flag("kubeconfig");
  o.context = flag("context");
  o.required = true;
  o.deadline = std::chrono::steady_clock::now() + timeout;
  auto connected = connect_api(o);
  if (!connected.ok()) return connected.error();
  return std::move(connected->client);
}

Result<std::chrono::milliseconds> parse_timeout_flag(const std::string& text) {
  auto d = parse_duration(text, "--timeout");
  if (!d.ok()) return d.error();
  if (*d < std::chrono::seconds(1) || *d > std::chrono::hours(1)) {
    return usage_error(fmt::format("--timeout: must be within [1s, 1h], got {}", quote_value(text)));
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

Status check_namespace_name(const std::string& name, const char* flag) {
  bool ok = !name.empty() && name.size() <= 63 && name.front() != '-' && name.back() != '-';
  for (char c : name) ok &= (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  if (!ok) {
    return usage_error(fmt::format("{}: {} is not a namespace name (a lower-case DNS label of at most 63 characters)",
                                   flag, quote_value(name)));
  }
  return ok_status();
}

}  // namespace iogate
