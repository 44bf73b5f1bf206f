// Fault injection: rules that make matching requests slow, rejected (429 as priority-and-fairness
// sends it, or 500), cut (the connection closes without a response) or raced (another client
// writes the object first, so a read-modify-write that carries the resourceVersion it read meets
// 409 Conflict). A rule matches by method (empty: any) and a regular expression over the whole
// path, and fires for the next `count` matching requests (count < 0: for every one) until cleared.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "api_result.h"

namespace iogate::apiserver {

enum class FaultKind { kDelay, kTooManyRequests, kInternalError, kDrop, kWrite };

struct Fault {
  std::string method;      // "PATCH"; empty matches any method
  std::string path_regex;  // matched against the whole path (no query)
  FaultKind kind = FaultKind::kInternalError;
  int delay_ms = 0;       // kDelay: then the request proceeds
  int retry_after_s = 1;  // kTooManyRequests: the Retry-After header
  int count = -1;         // how many matching requests it fires for; < 0: always
  // kWrite: a JSON merge patch (an object) applied to the object the request's path names (for a
  // /status path, the main object) just before the request is served; then the request proceeds.
  nlohmann::json patch;
  // Searched for in the request body; empty matches any. Tells apart requests to one path, such
  // as a label patch and a taint patch of the same node.
  std::string body_regex;
};

// {method, path_regex, body_regex, kind: delay|429|500|drop|write, delay_ms, retry_after_s, count, patch}
ApiResult<Fault> fault_from_json(const nlohmann::json& j);
nlohmann::json fault_to_json(const Fault& f);
// "delay", "429", "500", "drop", "write": as in the JSON and the request log.
std::string fault_kind_name(FaultKind kind);

class FaultSet {
 public:
  void add(Fault fault);  // path_regex already checked by fault_from_json or a caller
  void clear() { rules_.clear(); }
  // The first live rule matching the request, its count spent by one.
  std::optional<Fault> take(const std::string& method, const std::string& path, const std::string& body = "");
  nlohmann::json to_json() const;

 private:
  struct Rule {
    Fault fault;
    std::regex regex;
    std::regex body_regex;
  };
  std::vector<Rule> rules_;
};

}  // namespace iogate::apiserver
