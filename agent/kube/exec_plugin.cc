#include "kube/exec_plugin.h"

#include <errno.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/clock.h"
#include "base/subprocess.h"
#include "base/units.h"

namespace iogate {
namespace {

std::string first_line(const std::string& text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return "";
  size_t end = text.find_first_of("\r\n", start);
  std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

std::string describe(const ExecPlugin& p) { return fmt::format("{} exec plugin \"{}\"", p.user, p.command); }

const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

std::string exec_info_json(const ExecPlugin& plugin, const ExecCluster& cluster) {
  nlohmann::json spec = {{"interactive", false}};
  if (plugin.provide_cluster_info) {
    // client-go's Cluster: certificate-authority-data is []byte, so base64 in JSON.
    spec["cluster"] = {{"server", cluster.server}, {"certificate-authority-data", encode_base64(cluster.ca_pem)}};
  }
  return nlohmann::json{{"apiVersion", plugin.api_version}, {"kind", "ExecCredential"}, {"spec", spec}}.dump();
}

Result<ExecCredential> parse_exec_credential(std::string_view output, const std::string& api_version) {
  auto bad = [](const std::string& why) { return runtime_error("output is not an ExecCredential: " + why); };
  auto j = nlohmann::json::parse(output.begin(), output.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  const nlohmann::json* kind = member(j, "kind");
  if (!kind || !kind->is_string() || *kind != "ExecCredential") return bad("kind is not ExecCredential");
  const nlohmann::json* version = member(j, "apiVersion");
  if (!version || !version->is_string() || *version != api_version) {
    return bad(fmt::format("apiVersion {} is not the kubeconfig's {}",
                           version && version->is_string() ? version->get<std::string>() : "(none)", api_version));
  }
  const nlohmann::json* status = member(j, "status");
  if (!status || !status->is_object()) return bad("no status");
  ExecCredential c;
  auto text = [&](const char* key, std::string& into) -> Status {
    const nlohmann::json* v = member(*status, key);
    if (!v) return ok_status();
    if (!v->is_string()) return bad(fmt::format("status.{} is not a string", key));
    into = v->get<std::string>();
    return ok_status();
  };
  for (auto [key, into] : {std::pair{"token", &c.token}, std::pair{"clientCertificateData", &c.client_cert_pem},
                           std::pair{"clientKeyData", &c.client_key_pem}}) {
    if (Status s = text(key, *into); !s.ok()) return s.error();
  }
  if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
    return bad(c.client_cert_pem.empty() ? "status.clientKeyData without status.clientCertificateData"
                                         : "status.clientCertificateData without status.clientKeyData");
  }
  if (c.token.empty() && c.client_cert_pem.empty()) {
    return bad("status has neither a token nor clientCertificateData and clientKeyData");
  }
  std::string expiry;
  if (Status s = text("expirationTimestamp", expiry); !s.ok()) return s.error();
  if (!expiry.empty()) {
    c.expiry = parse_rfc3339_utc(expiry);
    if (!c.expiry) return bad("status.expirationTimestamp is not RFC 3339 UTC (\"2026-01-02T03:04:05Z\")");
  }
  return c;
}

Result<ExecCredential> run_exec_plugin(const ExecPlugin& plugin, const ExecCluster& cluster) {
  SubprocessSpec spec;
  spec.command = plugin.command;
  spec.args = plugin.args;
  spec.env = process_environment();
  for (const auto& [name, value] : plugin.env) spec.env.push_back(name + "=" + value);
  spec.env.push_back("KUBERNETES_EXEC_INFO=" + exec_info_json(plugin, cluster));
  spec.timeout = plugin.timeout;

  auto ran = run_subprocess(spec);
  if (!ran.ok()) {
    if (ran.error().os_errno == ENOENT) {
      std::string hint = plugin.install_hint.empty() ? "" : ": " + first_line(plugin.install_hint);
      return runtime_error(fmt::format("{}: not found{}", describe(plugin), hint));
    }
    return runtime_error(fmt::format("{}: {}", describe(plugin), ran.error().message));
  }
  const SubprocessResult& r = *ran;
  std::string stderr_line = first_line(r.err);
  std::string said = stderr_line.empty() ? "" : ": " + stderr_line;
  if (r.timed_out) {
    return runtime_error(fmt::format("{}: killed after {} without finishing{}", describe(plugin),
                                     format_duration_compact(std::chrono::nanoseconds(plugin.timeout).count()), said));
  }
  if (r.signal != 0) return runtime_error(fmt::format("{}: killed by signal {}{}", describe(plugin), r.signal, said));
  if (r.exit_status != 0) {
    return runtime_error(fmt::format("{}: exit status {}{}", describe(plugin), r.exit_status, said));
  }
  auto parsed = parse_exec_credential(r.out, plugin.api_version);
  if (!parsed.ok()) return runtime_error(fmt::format("{}: {}{}", describe(plugin), parsed.error().message, said));
  return parsed;
}

}  // namespace iogate
