#include "api_handler.h"

#include <chrono>
#include <thread>

#include "discovery.h"
#include "rest.h"

namespace iogate::apiserver {

using nlohmann::json;

json to_json(const RequestRecord& r) {
  return {{"method", r.method}, {"path", r.path},
          {"query", r.query},   {"content_type", r.content_type},
          {"accept", r.accept}, {"user_agent", r.user_agent},
          {"auth", r.auth},     {"body", r.body},
          {"status", r.status}, {"fault", r.fault}};
}

namespace {

constexpr size_t kLoggedBodyLimit = 64 * 1024;
const char* kControlPrefix = "/_test/";

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Paths the default RBAC (system:public-info-viewer) lets anyone read.
bool public_info_path(const std::string& path) {
  return path == "/version" || path == "/healthz" || path == "/livez" || path == "/readyz";
}

std::string joined_query(const ApiRequest& r) {
  std::string out;
  for (const auto& [k, v] : r.query) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

ApiResponse too_many_requests(int retry_after_s) {
  // What API priority and fairness sends: plain text, not a Status.
  return {429,
          "text/plain; charset=utf-8",
          "Too many requests, please try again later.\n",
          {{"Retry-After", std::to_string(retry_after_s)}},
          false};
}

ApiResponse not_found_path() {
  return error_response({404, "NotFound", "the server could not find the requested resource", nullptr});
}

}  // namespace

ApiHandler::ApiHandler(std::string token) : token_(std::move(token)) { seed_system_namespaces(store_); }

void ApiHandler::set_server_address(std::string address) {
  std::lock_guard lock(mu_);
  server_address_ = std::move(address);
}

std::string ApiHandler::redacted_auth(const ApiRequest& r) {
  if (!r.client_cert_user.empty()) return "x509 CN=" + r.client_cert_user;
  if (r.bearer_token) return "Bearer <redacted>";
  if (r.authorization_present) return "<redacted>";
  return "none";
}

ApiHandler::Auth ApiHandler::authenticate(const ApiRequest& r) const {
  // kube-apiserver's union authenticator: x509 first, then bearer tokens.
  if (!r.client_cert_user.empty()) return Auth::kClientCert;
  if (r.bearer_token) return *r.bearer_token == token_ && !token_.empty() ? Auth::kToken : Auth::kRejected;
  if (r.authorization_present) return Auth::kRejected;
  return Auth::kAnonymous;
}

ApiResponse ApiHandler::handle(const ApiRequest& r) {
  if (starts_with(r.path, kControlPrefix)) {
    {
      std::lock_guard lock(mu_);
      Auth auth = authenticate(r);
      if (auth == Auth::kRejected || auth == Auth::kAnonymous) return error_response(unauthorized());
    }
    return serve_control(r);
  }
  RequestRecord record{r.method,
                       r.path,
                       joined_query(r),
                       r.content_type,
                       r.accept,
                       r.user_agent,
                       redacted_auth(r),
                       r.body.substr(0, kLoggedBodyLimit),
                       0,
                       ""};
  std::optional<Fault> fault;
  {
    std::lock_guard lock(mu_);
    fault = faults_.take(r.method, r.path, r.body);
  }
  if (fault && fault->kind == FaultKind::kDelay) {
    std::this_thread::sleep_for(std::chrono::milliseconds(fault->delay_ms));
  }
  ApiResponse response;
  std::lock_guard lock(mu_);
  if (fault && fault->kind == FaultKind::kDrop) {
    response.drop_connection = true;
    record.fault = "drop";
  } else if (fault && fault->kind == FaultKind::kTooManyRequests) {
    response = too_many_requests(fault->retry_after_s);
    record.fault = "429";
  } else if (fault && fault->kind == FaultKind::kInternalError) {
    response = error_response(internal_error("injected fault"));
    record.fault = "500";
  } else {
    if (fault && fault->kind == FaultKind::kWrite) record.fault = race_write(*fault, r.path);
    else if (fault) record.fault = "delay";
    response = serve_api(r);
  }
  record.status = response.drop_connection ? 0 : response.status;
  log_.push_back(std::move(record));
  return response;
}

std::string ApiHandler::race_write(const Fault& fault, const std::string& path) {
  auto target = parse_resource_path(path);
  if (!target) return "write: " + path + " names no object";
  auto written = concurrent_write(store_, *target, fault.patch);
  // The log says when the race did not happen, so a test that expected a 409 can tell why.
  if (!written.ok()) return "write: " + written.error().message;
  return "write";
}

ApiResponse ApiHandler::serve_api(const ApiRequest& r) {
  Auth auth = authenticate(r);
  if (auth == Auth::kRejected || (auth == Auth::kAnonymous && !public_info_path(r.path))) {
    return error_response(unauthorized());
  }
  const std::string& p = r.path;
  if (r.method == "GET") {
    if (p == "/version") return json_response(200, version_document());
    if (p == "/healthz" || p == "/livez" || p == "/readyz") return {200, "text/plain; charset=utf-8", "ok", {}, false};
    if (p == "/api") return json_response(200, api_versions_document(server_address_));
    if (p == "/apis") return json_response(200, api_group_list_document());
    if (p == "/api/v1") return json_response(200, *api_resource_list("", "v1"));
    if (p == "/apis/events.k8s.io") return json_response(200, *api_group_document("events.k8s.io"));
    if (p == "/apis/events.k8s.io/v1") return json_response(200, *api_resource_list("events.k8s.io", "v1"));
  }
  auto target = parse_resource_path(p);
  if (!target) return not_found_path();
  return serve_rest(store_, *target, r);
}

ApiResult<json> ApiHandler::seed(json object) {
  if (!object.is_object()) return bad_request("seed: expected a JSON object");
  const std::string kind = object.value("kind", "");
  const std::string api_version = object.value("apiVersion", "");
  auto type = find_kind(kind);
  if (!type)
    return bad_request("seed: kind " + kind + " is not served (Pod, Node, PersistentVolumeClaim, Event, Namespace)");
  if (kind == "Event" && api_version == "events.k8s.io/v1") object = event_from_events_v1(object);
  object["apiVersion"] = type->api_version();
  if (!object.contains("metadata") || !object["metadata"].is_object() || object["metadata"].value("name", "").empty()) {
    return bad_request("seed: metadata.name is required");
  }
  std::lock_guard lock(mu_);
  if (type->namespaced) {
    std::string ns = object["metadata"].value("namespace", "default");
    object["metadata"]["namespace"] = ns;
    if (!store_.get("namespaces", "", ns)) {
      store_.put("namespaces", {{"kind", "Namespace"},
                                {"apiVersion", "v1"},
                                {"metadata", {{"name", ns}, {"labels", {{"kubernetes.io/metadata.name", ns}}}}},
                                {"status", {{"phase", "Active"}}}});
    }
  } else {
    object["metadata"].erase("namespace");
  }
  object["metadata"].erase("resourceVersion");
  return store_.put(type->resource, std::move(object));
}

std::optional<json> ApiHandler::object(const std::string& resource, const std::string& ns,
                                       const std::string& name) const {
  std::lock_guard lock(mu_);
  return store_.get(resource, ns, name);
}

std::vector<json> ApiHandler::objects(const std::string& resource, const std::string& ns) const {
  std::lock_guard lock(mu_);
  return store_.list(resource, ns);
}

void ApiHandler::add_fault(Fault fault) {
  std::lock_guard lock(mu_);
  faults_.add(std::move(fault));
}

void ApiHandler::clear_faults() {
  std::lock_guard lock(mu_);
  faults_.clear();
}

void ApiHandler::set_token(std::string token) {
  std::lock_guard lock(mu_);
  token_ = std::move(token);
}

std::vector<RequestRecord> ApiHandler::requests() const {
  std::lock_guard lock(mu_);
  return log_;
}

void ApiHandler::clear_requests() {
  std::lock_guard lock(mu_);
  log_.clear();
}

// /_test/objects                      POST: seed; GET: every object
// /_test/objects/RESOURCE[/NS]/NAME   GET one (NS for namespaced resources)
// /_test/objects/RESOURCE[/NS]        GET a list (namespaced: of NS; cluster-scoped: all)
// /_test/faults                       POST: add one; DELETE: clear all; GET: list
// /_test/token                        POST {"token": "..."}: rotate
// /_test/requests                     GET: the log; DELETE: clear it
ApiResponse ApiHandler::serve_control(const ApiRequest& r) {
  const std::string rest = r.path.substr(std::string(kControlPrefix).size());
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t slash = rest.find('/', start);
    if (slash == std::string::npos) slash = rest.size();
    if (slash > start) parts.push_back(rest.substr(start, slash - start));
    start = slash + 1;
  }
  if (parts.empty()) return not_found_path();
  const std::string& m = r.method;
  auto body = [&]() { return json::parse(r.body, nullptr, false); };
  if (parts[0] == "objects") {
    if (parts.size() == 1 && m == "POST") {
      json j = body();
      if (j.is_discarded()) return error_response(bad_request("seed: the body is not JSON"));
      std::vector<json> items;
      if (j.is_array()) items = j.get<std::vector<json>>();
      else if (j.is_object() && j.contains("items")) items = j["items"].get<std::vector<json>>();
      else items = {j};
      json stored = json::array();
      for (auto& item : items) {
        auto result = seed(item);
        if (!result.ok()) return error_response(result.error());
        stored.push_back(result.value());
      }
      return json_response(201, stored.size() == 1 ? stored[0] : stored);
    }
    if (m != "GET") return error_response(method_not_allowed("objects: GET or POST"));
    if (parts.size() == 1) {
      json all = json::array();
      for (const char* res : {"namespaces", "nodes", "pods", "persistentvolumeclaims", "events"}) {
        for (auto& o : objects(res, "")) all.push_back(o);
      }
      return json_response(200, all);
    }
    auto type = find_resource("", parts[1]);
    if (!type) return error_response(bad_request("objects: unknown resource " + parts[1]));
    std::string ns, name;
    if (type->namespaced) {
      if (parts.size() >= 3) ns = parts[2];
      if (parts.size() >= 4) name = parts[3];
    } else if (parts.size() >= 3) {
      name = parts[2];
    }
    if (name.empty()) return json_response(200, objects(type->resource, ns));
    auto o = object(type->resource, ns, name);
    if (!o) return error_response(not_found(type->resource, "", name));
    return json_response(200, *o);
  }
  if (parts[0] == "faults") {
    if (m == "POST") {
      json j = body();
      auto fault = fault_from_json(j.is_discarded() ? json() : j);
      if (!fault.ok()) return error_response(fault.error());
      add_fault(fault.value());
      return json_response(201, fault_to_json(fault.value()));
    }
    if (m == "DELETE") {
      clear_faults();
      return json_response(200, json::array());
    }
    std::lock_guard lock(mu_);
    return json_response(200, faults_.to_json());
  }
  if (parts[0] == "token" && m == "POST") {
    json j = body();
    if (j.is_discarded() || !j.is_object() || !j.contains("token") || !j["token"].is_string() ||
        j["token"].get<std::string>().empty()) {
      return error_response(bad_request("token: expected {\"token\": \"<non-empty string>\"}"));
    }
    set_token(j["token"].get<std::string>());
    return json_response(200, json::object());
  }
  if (parts[0] == "requests") {
    if (m == "DELETE") {
      clear_requests();
      return json_response(200, json::array());
    }
    json out = json::array();
    for (const auto& rec : requests()) out.push_back(to_json(rec));
    return json_response(200, out);
  }
  return not_found_path();
}

}  // namespace iogate::apiserver
