#include "faults.h"

namespace iogate::apiserver {

using nlohmann::json;

ApiResult<Fault> fault_from_json(const json& j) {
  if (!j.is_object()) return bad_request("fault: expected a JSON object");
  Fault f;
  try {
    f.method = j.value("method", "");
    f.path_regex = j.value("path_regex", ".*");
    f.body_regex = j.value("body_regex", "");
    std::string kind = j.at("kind").is_string() ? j.at("kind").get<std::string>() : j.at("kind").dump();
    if (kind == "delay") f.kind = FaultKind::kDelay;
    else if (kind == "429") f.kind = FaultKind::kTooManyRequests;
    else if (kind == "500") f.kind = FaultKind::kInternalError;
    else if (kind == "drop") f.kind = FaultKind::kDrop;
    else if (kind == "write") f.kind = FaultKind::kWrite;
    else return bad_request("fault.kind: expected delay, 429, 500, drop or write, got " + kind);
    f.delay_ms = j.value("delay_ms", 0);
    f.retry_after_s = j.value("retry_after_s", 1);
    f.count = j.value("count", -1);
    if (f.kind == FaultKind::kWrite) {
      // A merge patch that is not an object would replace the whole object, never what a
      // concurrent writer does.
      if (!j.contains("patch") || !j.at("patch").is_object()) {
        return bad_request("fault.patch: a write fault needs a JSON merge patch object");
      }
      f.patch = j.at("patch");
    }
  } catch (const json::exception& e) {
    return bad_request(std::string("fault: ") + e.what());
  }
  for (auto [field, text] : {std::pair{"path_regex", &f.path_regex}, std::pair{"body_regex", &f.body_regex}}) {
    try {
      std::regex check(*text);
    } catch (const std::regex_error& e) {
      return bad_request(std::string("fault.") + field + ": " + e.what());
    }
  }
  return f;
}

std::string fault_kind_name(FaultKind kind) {
  static const char* names[] = {"delay", "429", "500", "drop", "write"};
  return names[static_cast<int>(kind)];
}

json fault_to_json(const Fault& f) {
  json j = {{"method", f.method},
            {"path_regex", f.path_regex},
            {"body_regex", f.body_regex},
            {"kind", fault_kind_name(f.kind)},
            {"delay_ms", f.delay_ms},
            {"retry_after_s", f.retry_after_s},
            {"count", f.count}};
  if (f.kind == FaultKind::kWrite) j["patch"] = f.patch;
  return j;
}

void FaultSet::add(Fault fault) {
  std::regex regex(fault.path_regex);
  std::regex body_regex(fault.body_regex);
  rules_.push_back({std::move(fault), std::move(regex), std::move(body_regex)});
}

std::optional<Fault> FaultSet::take(const std::string& method, const std::string& path, const std::string& body) {
  for (auto& rule : rules_) {
    if (rule.fault.count == 0) continue;
    if (!rule.fault.method.empty() && rule.fault.method != method) continue;
    if (!std::regex_match(path, rule.regex)) continue;
    if (!rule.fault.body_regex.empty() && !std::regex_search(body, rule.body_regex)) continue;
    if (rule.fault.count > 0) --rule.fault.count;
    return rule.fault;
  }
  return std::nullopt;
}

json FaultSet::to_json() const {
  json out = json::array();
  for (const auto& rule : rules_) out.push_back(fault_to_json(rule.fault));
  return out;
}

}  // namespace iogate::apiserver
