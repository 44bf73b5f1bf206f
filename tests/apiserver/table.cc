#include "table.h"

#include <ctime>

namespace iogate::apiserver {

using nlohmann::json;

bool wants_table(const std::string& accept) {
  return accept.find("as=Table") != std::string::npos && accept.find("g=meta.k8s.io") != std::string::npos;
}

std::string human_duration(long long s) {
  auto f = [](long long a, const char* ua, long long b, const char* ub) {
    return b == 0 ? std::to_string(a) + ua : std::to_string(a) + ua + std::to_string(b) + ub;
  };
  if (s < -1) return "<invalid>";
  if (s < 0) return "0s";
  if (s < 120) return std::to_string(s) + "s";
  long long m = s / 60;
  if (m < 10) return f(m, "m", s % 60, "s");
  if (m < 180) return std::to_string(m) + "m";
  long long h = s / 3600;
  if (h < 8) return f(h, "h", m % 60, "m");
  if (h < 48) return std::to_string(h) + "h";
  if (h < 24 * 8) return f(h / 24, "d", h % 24, "h");
  if (h < 24 * 365 * 2) return std::to_string(h / 24) + "d";
  if (h < 24 * 365 * 8) return f(h / (24 * 365), "y", (h / 24) % 365, "d");
  return std::to_string(h / (24 * 365)) + "y";
}

namespace {

json column(const std::string& name, const std::string& type, int priority = 0, const std::string& format = "") {
  return {{"name", name}, {"type", type}, {"format", format}, {"description", name}, {"priority", priority}};
}

std::time_t parse_time(const std::string& t) {
  std::tm tm{};
  if (t.size() < 19 || !strptime(t.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return 0;
  return timegm(&tm);
}

std::string age(const json& object, const std::string& ptr, std::time_t now) {
  json::json_pointer p(ptr);
  if (!object.contains(p) || !object.at(p).is_string()) return "<unknown>";
  return human_duration(static_cast<long long>(now - parse_time(object.at(p).get<std::string>())));
}

std::string str(const json& object, const std::string& ptr, const std::string& fallback = "") {
  json::json_pointer p(ptr);
  if (!object.contains(p) || !object.at(p).is_string() || object.at(p).get<std::string>().empty()) return fallback;
  return object.at(p).get<std::string>();
}

std::string condition_status(const json& object, const std::string& type) {
  for (const auto& c : object.value("/status/conditions"_json_pointer, json::array())) {
    if (c.value("type", "") == type) return c.value("status", "");
  }
  return "";
}

json node_row(const json& n, std::time_t now) {
  std::string ready = condition_status(n, "Ready");
  std::string status = ready == "True" ? "Ready" : ready == "False" ? "NotReady" : "Unknown";
  if (n.value("/spec/unschedulable"_json_pointer, false)) status += ",SchedulingDisabled";
  std::string roles;
  const json labels = n.value("/metadata/labels"_json_pointer, json::object());
  for (const auto& [key, value] : labels.items()) {
    const std::string prefix = "node-role.kubernetes.io/";
    if (key.rfind(prefix, 0) == 0 && key.size() > prefix.size())
      roles += (roles.empty() ? "" : ",") + key.substr(prefix.size());
  }
  std::string internal_ip = "<none>", external_ip = "<none>";
  for (const auto& a : n.value("/status/addresses"_json_pointer, json::array())) {
    if (a.value("type", "") == "InternalIP" && internal_ip == "<none>") internal_ip = a.value("address", "");
    if (a.value("type", "") == "ExternalIP" && external_ip == "<none>") external_ip = a.value("address", "");
  }
  return json::array({str(n, "/metadata/name"), status, roles.empty() ? "<none>" : roles,
                      age(n, "/metadata/creationTimestamp", now), str(n, "/status/nodeInfo/kubeletVersion"),
                      internal_ip, external_ip, str(n, "/status/nodeInfo/osImage", "<unknown>"),
                      str(n, "/status/nodeInfo/kernelVersion", "<unknown>"),
                      str(n, "/status/nodeInfo/containerRuntimeVersion", "<unknown>")});
}

json pod_row(const json& p, std::time_t now) {
  size_t total = p.value("/spec/containers"_json_pointer, json::array()).size();
  size_t ready = 0;
  long long restarts = 0;
  std::string status = str(p, "/status/reason", str(p, "/status/phase", "Pending"));
  for (const auto& cs : p.value("/status/containerStatuses"_json_pointer, json::array())) {
    if (cs.value("ready", false)) ++ready;
    restarts += cs.value("restartCount", 0LL);
    std::string waiting = cs.value("/state/waiting/reason"_json_pointer, std::string());
    if (!waiting.empty()) status = waiting;
  }
  if (p.contains("/metadata/deletionTimestamp"_json_pointer)) status = "Terminating";
  return json::array({str(p, "/metadata/name"), std::to_string(ready) + "/" + std::to_string(total), status, restarts,
                      age(p, "/metadata/creationTimestamp", now), str(p, "/status/podIP", "<none>"),
                      str(p, "/spec/nodeName", "<none>"), str(p, "/status/nominatedNodeName", "<none>"), "<none>"});
}

json pvc_row(const json& c, std::time_t now) {
  std::string modes;
  for (const auto& m : c.value("/status/accessModes"_json_pointer, json::array())) {
    std::string s = m.get<std::string>();
    std::string shortm = s == "ReadWriteOnce"      ? "RWO"
                         : s == "ReadOnlyMany"     ? "ROX"
                         : s == "ReadWriteMany"    ? "RWX"
                         : s == "ReadWriteOncePod" ? "RWOP"
                                                   : s;
    modes += (modes.empty() ? "" : ",") + shortm;
  }
  return json::array({str(c, "/metadata/name"), str(c, "/status/phase", "Pending"), str(c, "/spec/volumeName"),
                      str(c, "/status/capacity/storage"), modes, str(c, "/spec/storageClassName", "<unset>"),
                      str(c, "/spec/volumeAttributesClassName", "<unset>"), age(c, "/metadata/creationTimestamp", now),
                      str(c, "/spec/volumeMode", "Filesystem")});
}

json event_row(const json& e, std::time_t now) {
  std::string last = str(e, "/lastTimestamp", str(e, "/series/lastObservedTime", str(e, "/eventTime")));
  std::string first = str(e, "/firstTimestamp", str(e, "/eventTime"));
  std::string kind = str(e, "/involvedObject/kind");
  for (char& ch : kind) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string source = str(e, "/source/component", str(e, "/reportingComponent"));
  long long count = e.value("count", 0LL);
  if (count == 0) count = e.value("/series/count"_json_pointer, 1LL);
  auto since = [now](const std::string& t) {
    return t.empty() ? std::string("<unknown>") : human_duration(static_cast<long long>(now - parse_time(t)));
  };
  return json::array({since(last), str(e, "/type"), str(e, "/reason"), kind + "/" + str(e, "/involvedObject/name"),
                      str(e, "/involvedObject/fieldPath"), source, str(e, "/message"), since(first), count,
                      str(e, "/metadata/name")});
}

json namespace_row(const json& n, std::time_t now) {
  return json::array(
      {str(n, "/metadata/name"), str(n, "/status/phase", "Active"), age(n, "/metadata/creationTimestamp", now)});
}

}  // namespace

json make_table(const std::string& kind, const std::vector<json>& objects, const std::string& list_rv,
                std::time_t now) {
  json columns;
  json (*row)(const json&, std::time_t) = nullptr;
  if (kind == "Node") {
    columns = {column("Name", "string", 0, "name"),
               column("Status", "string"),
               column("Roles", "string"),
               column("Age", "string"),
               column("Version", "string"),
               column("Internal-IP", "string", 1),
               column("External-IP", "string", 1),
               column("OS-Image", "string", 1),
               column("Kernel-Version", "string", 1),
               column("Container-Runtime", "string", 1)};
    row = node_row;
  } else if (kind == "Pod") {
    columns = {column("Name", "string", 0, "name"),
               column("Ready", "string"),
               column("Status", "string"),
               column("Restarts", "string"),
               column("Age", "string"),
               column("IP", "string", 1),
               column("Node", "string", 1),
               column("Nominated Node", "string", 1),
               column("Readiness Gates", "string", 1)};
    row = pod_row;
  } else if (kind == "PersistentVolumeClaim") {
    columns = {column("Name", "string", 0, "name"),
               column("Status", "string"),
               column("Volume", "string"),
               column("Capacity", "string"),
               column("Access Modes", "string"),
               column("StorageClass", "string"),
               column("VolumeAttributesClass", "string"),
               column("Age", "string"),
               column("VolumeMode", "string", 1)};
    row = pvc_row;
  } else if (kind == "Event") {
    columns = {column("Last Seen", "string"),      column("Type", "string"),          column("Reason", "string"),
               column("Object", "string"),         column("Subobject", "string", 1),  column("Source", "string", 1),
               column("Message", "string"),        column("First Seen", "string", 1), column("Count", "string", 1),
               column("Name", "string", 1, "name")};
    row = event_row;
  } else {
    columns = {column("Name", "string", 0, "name"), column("Status", "string"), column("Age", "string")};
    row = namespace_row;
  }
  json rows = json::array();
  for (const auto& o : objects) {
    json meta = o.value("metadata", json::object());
    meta.erase("managedFields");
    rows.push_back(
        {{"cells", row(o, now)},
         {"object", {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", meta}}}});
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", list_rv}}},
          {"columnDefinitions", columns},
          {"rows", rows}};
}

}  // namespace iogate::apiserver
