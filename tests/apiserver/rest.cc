#include "rest.h"

#include <ctime>
#include <sstream>

#include "patch.h"
#include "table.h"
#include "validation.h"

namespace iogate::apiserver {

using nlohmann::json;

ApiResponse json_response(int status, const json& body) { return {status, "application/json", body.dump(), {}, false}; }

ApiResponse error_response(const ApiError& error) { return json_response(error.code, status_body(error)); }

void seed_system_namespaces(ObjectStore& store) {
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    store.put("namespaces", {{"kind", "Namespace"},
                             {"apiVersion", "v1"},
                             {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/metadata.name", name}}}}},
                             {"spec", {{"finalizers", {"kubernetes"}}}},
                             {"status", {{"phase", "Active"}}}});
  }
}

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

std::string query_value(const ApiRequest& r, const std::string& key) {
  auto it = r.query.find(key);
  return it == r.query.end() ? "" : it->second;
}

bool dry_run(const ApiRequest& r) { return query_value(r, "dryRun") == "All"; }

bool is_events_v1(const ResourceType& t) { return t.group == "events.k8s.io"; }

// The object as the requested API version shows it (events.k8s.io/v1 Events are renamed).
json view(const ResourceType& t, const json& stored) { return is_events_v1(t) ? event_to_events_v1(stored) : stored; }
json unview(const ResourceType& t, const json& object) {
  return is_events_v1(t) ? event_from_events_v1(object) : object;
}

std::string meta_string(const json& object, const char* field) {
  const json meta = object.value("metadata", json::object());
  if (!meta.is_object()) return "";
  auto it = meta.find(field);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "";
}

// Equality-based label selectors: "a=b,c!=d,e,!f".
bool labels_match(const json& object, const std::string& selector) {
  json labels = object.value("/metadata/labels"_json_pointer, json::object());
  for (const auto& term : split(selector, ',')) {
    if (term.empty()) continue;
    auto ne = term.find("!=");
    auto eq = term.find('=');
    if (ne != std::string::npos) {
      std::string k = term.substr(0, ne), v = term.substr(ne + 2);
      if (labels.contains(k) && labels[k] == v) return false;
    } else if (eq != std::string::npos) {
      std::string k = term.substr(0, eq), v = term.substr(term[eq + 1] == '=' ? eq + 2 : eq + 1);
      if (!labels.contains(k) || labels[k] != v) return false;
    } else if (term[0] == '!') {
      if (labels.contains(term.substr(1))) return false;
    } else if (!labels.contains(term)) {
      return false;
    }
  }
  return true;
}

// Field selectors over dotted paths: "involvedObject.name=p1,type!=Normal".
bool fields_match(const json& object, const std::string& selector) {
  for (const auto& term : split(selector, ',')) {
    if (term.empty()) continue;
    auto ne = term.find("!=");
    auto eq = term.find('=');
    bool negate = ne != std::string::npos;
    size_t at = negate ? ne : eq;
    if (at == std::string::npos) continue;
    std::string path = term.substr(0, at);
    std::string want = term.substr(negate ? at + 2 : (term[at + 1] == '=' ? at + 2 : at + 1));
    std::string ptr;
    for (const auto& part : split(path, '.')) ptr += "/" + part;
    json::json_pointer p(ptr);
    std::string have;
    if (object.contains(p)) have = object.at(p).is_string() ? object.at(p).get<std::string>() : object.at(p).dump();
    if ((have == want) == negate) return false;
  }
  return true;
}

ApiResponse object_response(int status, const RestTarget& t, const json& stored, const ApiRequest& r,
                            const ObjectStore& store) {
  if (wants_table(r.accept)) {
    return json_response(
        status, make_table(t.type.kind, {stored}, std::to_string(store.resource_version()), std::time(nullptr)));
  }
  return json_response(status, view(t.type, stored));
}

ApiResponse get_one(const ObjectStore& store, const RestTarget& t, const ApiRequest& r) {
  auto stored = store.get(t.type.resource, t.ns, t.name);
  if (!stored) return error_response(not_found(t.type.resource, t.type.group, t.name));
  return object_response(200, t, *stored, r, store);
}

ApiResponse list(const ObjectStore& store, const RestTarget& t, const ApiRequest& r) {
  const std::string labels = query_value(r, "labelSelector");
  const std::string fields = query_value(r, "fieldSelector");
  std::vector<json> items;
  for (const auto& o : store.list(t.type.resource, t.ns)) {
    if (!labels.empty() && !labels_match(o, labels)) continue;
    if (!fields.empty() && !fields_match(o, fields)) continue;
    items.push_back(o);
  }
  const std::string rv = std::to_string(store.resource_version());
  if (wants_table(r.accept)) return json_response(200, make_table(t.type.kind, items, rv, std::time(nullptr)));
  json out_items = json::array();
  for (const auto& o : items) {
    json item = view(t.type, o);
    item.erase("kind");  // items of a typed list carry no kind/apiVersion, as from the real server
    item.erase("apiVersion");
    out_items.push_back(item);
  }
  return json_response(200, {{"kind", t.type.kind + "List"},
                             {"apiVersion", t.type.api_version()},
                             {"metadata", {{"resourceVersion", rv}}},
                             {"items", out_items}});
}

std::vector<FieldCause> validate(const ResourceType& type, const json& stored_form, bool creating, bool events_v1) {
  if (type.kind == "Event" && creating) return validate_event_create(stored_form, events_v1);
  std::vector<FieldCause> errs = validate_object_meta(stored_form, creating);
  if (type.kind == "Node") {
    auto more = validate_node(stored_form);
    errs.insert(errs.end(), more.begin(), more.end());
  }
  return errs;
}

bool namespace_exists(const ObjectStore& store, const std::string& ns) {
  return store.get("namespaces", "", ns).has_value();
}

ApiResponse create(ObjectStore& store, const RestTarget& t, const ApiRequest& r) {
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return error_response(bad_request("the body of the request could not be decoded as a " + t.type.kind));
  }
  if (body.contains("kind") && body["kind"] != t.type.kind) {
    return error_response(bad_request("the API version in the data (" + body.value("apiVersion", "") +
                                      ") does not match the expected API version (" + t.type.api_version() + ")"));
  }
  body["kind"] = t.type.kind;
  body["apiVersion"] = t.type.api_version();
  if (!body.contains("metadata") || !body["metadata"].is_object()) body["metadata"] = json::object();
  json& meta = body["metadata"];
  if (t.type.namespaced) {
    std::string ns = meta.value("namespace", "");
    if (!ns.empty() && ns != t.ns) {
      return error_response(
          bad_request("the namespace of the provided object does not match the namespace sent on the request"));
    }
    meta["namespace"] = t.ns;
    if (!namespace_exists(store, t.ns)) return error_response(not_found("namespaces", "", t.ns));
  } else {
    meta.erase("namespace");
  }
  if (meta.value("name", "").empty() && !meta.value("generateName", "").empty()) {
    meta["name"] = meta["generateName"].get<std::string>() + random_suffix(5);
  }
  meta.erase("resourceVersion");
  json stored = unview(t.type, body);
  auto errs = validate(t.type, stored, /*creating=*/true, is_events_v1(t.type));
  if (!errs.empty()) return error_response(invalid(t.type.kind, t.type.group, meta.value("name", ""), errs));
  const std::string name = stored["metadata"]["name"];
  if (store.get(t.type.resource, t.ns, name))
    return error_response(already_exists(t.type.resource, t.type.group, name));
  if (dry_run(r)) {
    ObjectStore::fill_create_metadata(stored);
    return object_response(201, t, stored, r, store);
  }
  return object_response(201, t, store.put(t.type.resource, stored), r, store);
}

// The write rules shared by PATCH and PUT, given the current stored object and the client's
// proposed object (already in stored form).
ApiResponse write_update(ObjectStore& store, const RestTarget& t, const ApiRequest& r, const json& current,
                         json proposed, bool require_resource_version) {
  if (!proposed.is_object()) return error_response(bad_request("the object must be a JSON object"));
  if (!proposed.contains("metadata") || !proposed["metadata"].is_object()) proposed["metadata"] = json::object();
  json& meta = proposed["metadata"];
  std::string name = meta.value("name", "");
  if (name != t.name) {
    return error_response(
        bad_request("the name of the object (" + name + ") does not match the name on the URL (" + t.name + ")"));
  }
  if (t.type.namespaced && meta.value("namespace", t.ns) != t.ns) {
    return error_response(
        bad_request("the namespace of the provided object does not match the namespace sent on the request"));
  }
  const std::string current_uid = meta_string(current, "uid");
  const std::string uid = meta_string(proposed, "uid");
  if (!uid.empty() && uid != current_uid) {
    return error_response(
        conflict(t.type.resource, t.type.group, t.name,
                 "Precondition failed: UID in precondition: " + uid + ", UID in object meta: " + current_uid));
  }
  const std::string rv = meta_string(proposed, "resourceVersion");
  if (rv.empty() && require_resource_version) {
    return error_response(
        invalid(t.type.kind, t.type.group, t.name,
                {invalid_value("metadata.resourceVersion", "0x0", "must be specified for an update")}));
  }
  if (!rv.empty() && rv != meta_string(current, "resourceVersion")) {
    return error_response(stale_conflict(t.type.resource, t.type.group, t.name));
  }
  // What the client may not change.
  const json& current_meta = current.at("metadata");
  meta["uid"] = current_meta.at("uid");
  meta["creationTimestamp"] = current_meta.at("creationTimestamp");
  if (t.type.namespaced) meta["namespace"] = t.ns;
  proposed["kind"] = current.at("kind");
  proposed["apiVersion"] = current.at("apiVersion");
  // The main resource ignores status; the status subresource ignores spec (strategies'
  // PrepareForUpdate). pods/status keeps ownerReferences too.
  auto keep = [&](const char* field) {
    if (current.contains(field)) proposed[field] = current.at(field);
    else proposed.erase(field);
  };
  if (t.subresource == "status") {
    keep("spec");
    if (t.type.kind == "Pod") {
      if (current_meta.contains("ownerReferences")) meta["ownerReferences"] = current_meta.at("ownerReferences");
      else meta.erase("ownerReferences");
    }
  } else if (t.type.has_status) {
    keep("status");
  }
  auto errs = validate(t.type, proposed, /*creating=*/false, is_events_v1(t.type));
  if (!errs.empty()) return error_response(invalid(t.type.kind, t.type.group, t.name, errs));
  meta["resourceVersion"] = current_meta.at("resourceVersion");
  if (dry_run(r)) return object_response(200, t, proposed, r, store);
  return object_response(200, t, store.put(t.type.resource, proposed), r, store);
}

ApiResponse patch(ObjectStore& store, const RestTarget& t, const ApiRequest& r) {
  auto type = patch_type_from_content_type(r.content_type);
  if (!type) return error_response(unsupported_media_type());
  auto current = store.get(t.type.resource, t.ns, t.name);
  if (!current) return error_response(not_found(t.type.resource, t.type.group, t.name));
  auto patched = apply_patch(*type, t.type.kind, view(t.type, *current), r.body);
  if (!patched.ok()) return error_response(patched.error());
  return write_update(store, t, r, *current, unview(t.type, patched.value()), /*require_resource_version=*/false);
}

ApiResponse update(ObjectStore& store, const RestTarget& t, const ApiRequest& r) {
  auto current = store.get(t.type.resource, t.ns, t.name);
  if (!current) return error_response(not_found(t.type.resource, t.type.group, t.name));
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return error_response(bad_request("the body of the request could not be decoded as a " + t.type.kind));
  }
  return write_update(store, t, r, *current, unview(t.type, body), /*require_resource_version=*/true);
}

ApiResponse remove(ObjectStore& store, const RestTarget& t, const ApiRequest& r) {
  auto current = store.get(t.type.resource, t.ns, t.name);
  if (!current) return error_response(not_found(t.type.resource, t.type.group, t.name));
  if (!dry_run(r)) store.erase(t.type.resource, t.ns, t.name);
  return json_response(200, view(t.type, *current));
}

}  // namespace

std::optional<RestTarget> parse_resource_path(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& p : split(path, '/')) {
    if (!p.empty()) parts.push_back(p);
  }
  std::string group;
  size_t i = 0;
  if (parts.size() >= 2 && parts[0] == "api" && parts[1] == "v1") {
    i = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis" && parts[1] == "events.k8s.io" && parts[2] == "v1") {
    group = "events.k8s.io";
    i = 3;
  } else {
    return std::nullopt;
  }
  std::vector<std::string> rest(parts.begin() + static_cast<long>(i), parts.end());
  RestTarget t;
  // namespaces/NS/RESOURCE[/NAME[/SUB]] for namespaced resources.
  if (rest.size() >= 3 && rest[0] == "namespaces" && find_resource(group, rest[2])) {
    auto type = find_resource(group, rest[2]);
    if (!type->namespaced) return std::nullopt;
    t.type = *type;
    t.ns = rest[1];
    if (rest.size() >= 4) t.name = rest[3];
    if (rest.size() >= 5) t.subresource = rest[4];
    if (rest.size() > 5) return std::nullopt;
    return t;
  }
  // RESOURCE[/NAME[/SUB]]: cluster-scoped objects, or a namespaced list across all namespaces.
  if (rest.empty()) return std::nullopt;
  auto type = find_resource(group, rest[0]);
  if (!type) return std::nullopt;
  t.type = *type;
  if (rest.size() >= 2) {
    if (type->namespaced) return std::nullopt;
    t.name = rest[1];
  }
  if (rest.size() >= 3) t.subresource = rest[2];
  if (rest.size() > 3) return std::nullopt;
  return t;
}

ApiResult<json> concurrent_write(ObjectStore& store, const RestTarget& t, const json& patch) {
  if (t.name.empty()) return bad_request("a concurrent write needs a path that names one object");
  auto current = store.get(t.type.resource, t.ns, t.name);
  if (!current) return not_found(t.type.resource, t.type.group, t.name);
  json proposed = unview(t.type, merge_patch(view(t.type, *current), patch));
  if (!proposed.is_object()) return bad_request("the object must be a JSON object");
  if (!proposed.contains("metadata") || !proposed["metadata"].is_object()) proposed["metadata"] = json::object();
  // A writer that renamed the object would make a second one rather than race this one.
  const json& current_meta = current->at("metadata");
  json& meta = proposed["metadata"];
  for (const char* field : {"name", "namespace", "uid", "creationTimestamp", "resourceVersion"}) {
    if (current_meta.contains(field)) meta[field] = current_meta.at(field);
    else meta.erase(field);
  }
  proposed["kind"] = current->at("kind");
  proposed["apiVersion"] = current->at("apiVersion");
  auto errs = validate(t.type, proposed, /*creating=*/false, is_events_v1(t.type));
  if (!errs.empty()) return invalid(t.type.kind, t.type.group, t.name, errs);
  return store.put(t.type.resource, proposed);
}

ApiResponse serve_rest(ObjectStore& store, const RestTarget& t, const ApiRequest& r) {
  const std::string& m = r.method;
  if (!t.subresource.empty() && (t.subresource != "status" || !t.type.has_status)) {
    return error_response({404, "NotFound", "the server could not find the requested resource", nullptr});
  }
  if (t.name.empty()) {
    if (m == "GET") return list(store, t, r);
    if (m == "POST" && !t.ns.empty()) return create(store, t, r);
    if (m == "POST" && !t.type.namespaced) return create(store, t, r);
    return error_response(method_not_allowed("the server does not allow this method on the requested resource"));
  }
  if (m == "GET") return get_one(store, t, r);
  if (m == "PATCH") return patch(store, t, r);
  if (m == "PUT") return update(store, t, r);
  if (m == "DELETE" && t.subresource.empty()) return remove(store, t, r);
  return error_response(method_not_allowed("the server does not allow this method on the requested resource"));
}

}  // namespace iogate::apiserver
