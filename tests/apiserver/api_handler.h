// The whole test API server short of sockets: authentication (bearer token or verified client
// certificate), fault injection, the request log, discovery, the REST resources and the /_test/
// control endpoints. Thread-safe: the HTTP front calls handle() from its worker threads.
#pragma once

#include <nlohmann/json.hpp>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api_result.h"
#include "api_types.h"
#include "faults.h"
#include "object_store.h"

namespace iogate::apiserver {

class ApiHandler {
 public:
  explicit ApiHandler(std::string token);

  ApiResponse handle(const ApiRequest& request);

  // /api's serverAddressByClientCIDRs ("127.0.0.1:PORT"), known once the port is bound.
  void set_server_address(std::string address);

  // The control interface (also served under /_test/ over HTTP).
  // Seeds or replaces an object given with kind and apiVersion (Pod, Node, PersistentVolumeClaim,
  // Event in core/v1 or events.k8s.io/v1 form, Namespace); returns it as stored. A namespaced
  // object's namespace (default: "default") is created when missing.
  ApiResult<nlohmann::json> seed(nlohmann::json object);
  // resource: pods, nodes, persistentvolumeclaims, events, namespaces. Events in core/v1 form.
  std::optional<nlohmann::json> object(const std::string& resource, const std::string& ns,
                                       const std::string& name) const;
  std::vector<nlohmann::json> objects(const std::string& resource, const std::string& ns) const;
  void add_fault(Fault fault);
  void clear_faults();
  // Rotation: from now on only `token` authenticates; the old one gets 401.
  void set_token(std::string token);
  std::vector<RequestRecord> requests() const;
  void clear_requests();

 private:
  enum class Auth { kToken, kClientCert, kAnonymous, kRejected };
  Auth authenticate(const ApiRequest& request) const;  // under mu_
  ApiResponse serve_control(const ApiRequest& request);
  ApiResponse serve_api(const ApiRequest& request);  // under mu_
  // Applies a write fault's patch to the object `path` names; the request log's fault entry.
  std::string race_write(const Fault& fault, const std::string& path);  // under mu_
  static std::string redacted_auth(const ApiRequest& request);

  mutable std::mutex mu_;
  std::string token_;
  std::string server_address_ = "127.0.0.1:6443";
  ObjectStore store_;
  FaultSet faults_;
  std::vector<RequestRecord> log_;
};

}  // namespace iogate::apiserver
