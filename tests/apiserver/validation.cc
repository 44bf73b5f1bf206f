#include "validation.h"

#include <regex>
#include <set>

namespace iogate::apiserver {

using nlohmann::json;

namespace {

const char* kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const char* kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const char* kDns1123SubdomainFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

bool full_match(const std::string& value, const char* pattern) { return std::regex_match(value, std::regex(pattern)); }

std::string qualified_name_rule() {
  return std::string(
             "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
             "validation is '") +
         kQualifiedNameFmt + "')";
}

std::string dns_subdomain_rule() {
  return std::string(
             "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
             "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
             "used for validation is '") +
         kDns1123SubdomainFmt + "')";
}

std::string string_at(const json& object, const json::json_pointer& ptr) {
  if (!object.contains(ptr)) return "";
  const json& v = object.at(ptr);
  return v.is_string() ? v.get<std::string>() : "";
}

bool present(const json& object, const json::json_pointer& ptr) {
  return object.contains(ptr) && !object.at(ptr).is_null() &&
         !(object.at(ptr).is_string() && object.at(ptr).get<std::string>().empty());
}

void append(std::vector<FieldCause>& to, std::vector<FieldCause> more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

std::vector<FieldCause> validate_qualified_name(const std::string& value, const std::string& field) {
  std::vector<FieldCause> errs;
  std::string name = value;
  auto slash = value.find('/');
  if (slash != std::string::npos) {
    if (value.find('/', slash + 1) != std::string::npos) {
      errs.push_back(invalid_value(field, value,
                                   "a qualified name " + qualified_name_rule() +
                                       " with an optional DNS subdomain prefix and '/' (e.g. "
                                       "'example.com/MyName')"));
      return errs;
    }
    std::string prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back(invalid_value(field, value, "prefix part must be non-empty"));
    } else if (prefix.size() > 253) {
      errs.push_back(invalid_value(field, value, "prefix part must be no more than 253 characters"));
    } else if (!full_match(prefix, kDns1123SubdomainFmt)) {
      errs.push_back(invalid_value(field, value, "prefix part " + dns_subdomain_rule()));
    }
  }
  if (name.empty()) {
    errs.push_back(invalid_value(field, value, "name part must be non-empty"));
  } else if (name.size() > 63) {
    errs.push_back(invalid_value(field, value, "name part must be no more than 63 characters"));
  }
  if (!name.empty() && !full_match(name, kQualifiedNameFmt)) {
    errs.push_back(invalid_value(field, value, "name part " + qualified_name_rule()));
  }
  return errs;
}

std::vector<FieldCause> validate_label_value(const std::string& value, const std::string& field) {
  std::vector<FieldCause> errs;
  if (value.size() > 63) errs.push_back(invalid_value(field, value, "must be no more than 63 characters"));
  if (!full_match(value, kLabelValueFmt)) {
    errs.push_back(invalid_value(
        field, value,
        std::string("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
                    "'my_value',  or '12345', regex used for validation is '") +
            kLabelValueFmt + "')"));
  }
  return errs;
}

std::vector<FieldCause> validate_dns_subdomain(const std::string& value, const std::string& field) {
  std::vector<FieldCause> errs;
  if (value.size() > 253) errs.push_back(invalid_value(field, value, "must be no more than 253 characters"));
  if (!full_match(value, kDns1123SubdomainFmt)) errs.push_back(invalid_value(field, value, dns_subdomain_rule()));
  return errs;
}

std::vector<FieldCause> validate_object_meta(const json& object, bool creating) {
  std::vector<FieldCause> errs;
  const json meta = object.value("metadata", json::object());
  if (!meta.is_object()) return {invalid_value("metadata", meta.dump(), "must be an object")};
  const std::string name = meta.value("name", "");
  if (creating) {
    if (name.empty() && meta.value("generateName", "").empty()) {
      errs.push_back(required_value("metadata.name", "name or generateName is required"));
    } else if (!name.empty()) {
      append(errs, validate_dns_subdomain(name, "metadata.name"));
    }
  }
  if (auto labels = meta.find("labels"); labels != meta.end() && !labels->is_null()) {
    if (!labels->is_object()) return {invalid_value("metadata.labels", labels->dump(), "must be a map of strings")};
    for (const auto& [key, value] : labels->items()) {
      append(errs, validate_qualified_name(key, "metadata.labels"));
      if (!value.is_string()) {
        errs.push_back(invalid_value("metadata.labels", value.dump(), "label values must be strings"));
      } else {
        append(errs, validate_label_value(value.get<std::string>(), "metadata.labels"));
      }
    }
  }
  if (auto annotations = meta.find("annotations"); annotations != meta.end() && !annotations->is_null()) {
    if (!annotations->is_object()) {
      return {invalid_value("metadata.annotations", annotations->dump(), "must be a map of strings")};
    }
    size_t total = 0;
    for (const auto& [key, value] : annotations->items()) {
      std::string lower = key;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      append(errs, validate_qualified_name(lower, "metadata.annotations"));
      if (!value.is_string()) {
        errs.push_back(invalid_value("metadata.annotations", value.dump(), "annotation values must be strings"));
        continue;
      }
      total += key.size() + value.get<std::string>().size();
    }
    if (total > kTotalAnnotationSizeLimitBytes) {
      errs.push_back(too_long("metadata.annotations", kTotalAnnotationSizeLimitBytes));
    }
  }
  return errs;
}

std::vector<FieldCause> validate_node(const json& node) {
  std::vector<FieldCause> errs;
  const json::json_pointer taints_ptr("/spec/taints");
  if (!node.contains(taints_ptr) || node.at(taints_ptr).is_null()) return errs;
  const json& taints = node.at(taints_ptr);
  if (!taints.is_array()) return {invalid_value("spec.taints", taints.dump(), "must be a list")};
  std::set<std::pair<std::string, std::string>> seen;  // (effect, key): taints are unique by the pair
  for (size_t i = 0; i < taints.size(); ++i) {
    const std::string at = "spec.taints[" + std::to_string(i) + "]";
    const json& t = taints[i];
    if (!t.is_object()) {
      errs.push_back(invalid_value(at, t.dump(), "must be an object"));
      continue;
    }
    const std::string key = t.value("key", "");
    const std::string effect = t.value("effect", "");
    append(errs, validate_qualified_name(key, at + ".key"));
    if (t.contains("value") && t["value"].is_string()) append(errs, validate_label_value(t["value"], at + ".value"));
    if (effect.empty()) {
      errs.push_back(required_value(at + ".effect"));
    } else if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
      errs.push_back({"FieldValueNotSupported",
                      "Unsupported value: " + json(effect).dump() +
                          ": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                      at + ".effect"});
    }
    if (!seen.insert({effect, key}).second) {
      errs.push_back({"FieldValueDuplicate",
                      "Duplicate value: " + t.dump() + ": taints must be unique by key and effect pair", at});
    }
  }
  return errs;
}

std::vector<FieldCause> validate_event_create(const json& e, bool events_v1) {
  std::vector<FieldCause> errs = validate_object_meta(e, /*creating=*/true);
  using P = json::json_pointer;
  const std::string ns = string_at(e, P("/metadata/namespace"));
  const std::string involved_ns = string_at(e, P("/involvedObject/namespace"));
  const bool has_event_time = present(e, P("/eventTime"));
  // The field the reporting controller goes by in the API version the client used.
  const std::string controller_field = events_v1 ? "reportingController" : "reportingComponent";
  if (!has_event_time) {
    // Old-style events: only the namespaces must agree.
    if (involved_ns.empty() ? (!ns.empty() && ns != "default") : ns != involved_ns) {
      errs.push_back(invalid_value("involvedObject.namespace", involved_ns, "does not match event.namespace"));
    }
  } else {
    if (involved_ns.empty() && ns != "default" && ns != "kube-system") {
      errs.push_back(invalid_value("involvedObject.namespace", involved_ns, "does not match event.namespace"));
    }
    const std::string controller = string_at(e, P("/reportingComponent"));
    if (controller.empty()) errs.push_back(required_value(controller_field));
    else append(errs, validate_qualified_name(controller, controller_field));
    const std::string instance = string_at(e, P("/reportingInstance"));
    if (instance.empty()) errs.push_back(required_value("reportingInstance"));
    else if (instance.size() > 128)
      errs.push_back(invalid_value("reportingInstance", "", "can have at most 128 characters"));
    const std::string action = string_at(e, P("/action"));
    if (action.empty()) errs.push_back(required_value("action"));
    else if (action.size() > 128) errs.push_back(invalid_value("action", "", "can have at most 128 characters"));
    const std::string reason = string_at(e, P("/reason"));
    if (reason.empty()) errs.push_back(required_value("reason"));
    else if (reason.size() > 128) errs.push_back(invalid_value("reason", "", "can have at most 128 characters"));
    if (string_at(e, P("/message")).size() > 1024) {
      errs.push_back(invalid_value("message", "", "can have at most 1024 characters"));
    }
  }
  if (!events_v1) return errs;
  // events.k8s.io/v1 adds the strict rules.
  if (!has_event_time) errs.push_back(required_value("eventTime"));
  const std::string type = string_at(e, P("/type"));
  if (type != "Normal" && type != "Warning") errs.push_back(invalid_value("type", "", "has invalid value: " + type));
  if (present(e, P("/firstTimestamp"))) errs.push_back(invalid_value("firstTimestamp", "", "needs to be unset"));
  if (present(e, P("/lastTimestamp"))) errs.push_back(invalid_value("lastTimestamp", "", "needs to be unset"));
  if (e.value("count", 0) != 0) errs.push_back(invalid_value("count", "", "needs to be unset"));
  if (present(e, P("/source/component")) || present(e, P("/source/host"))) {
    errs.push_back(invalid_value("source", "", "needs to be unset"));
  }
  return errs;
}

}  // namespace iogate::apiserver
