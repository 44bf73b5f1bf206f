// Kubeconfig files (clientcmd's format): one or many files merged as client-go merges KUBECONFIG,
// one context, the fields iogate can honour.
#include <yaml-cpp/yaml.h>

#include <deque>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "base/base64.h"
#include "base/quote.h"
#include "base/text_file.h"
#include "base/yaml_fields.h"
#include "kube/kube_config.h"

namespace iogate {
namespace {

// One file. Errors carry its path and the field, e.g.
// "kubeconfig /root/.kube/config: users[admin].user.client-key: missing".
struct KubeconfigReader {
  std::string path;
  std::filesystem::path dir;

  Error field_error(const std::string& field, const std::string& what) const {
    return usage_error(fmt::format("kubeconfig {}: {}: {}", path, field, what));
  }

  // A string field; "" when absent, an error when it is there but not a scalar.
  Result<std::string> string_field(const YAML::Node& parent, const std::string& parent_name, const char* key) const {
    YAML::Node n = parent[key];
    if (yaml_absent(n)) return std::string();
    if (!n.IsScalar()) return field_error(field_child(parent_name, key), "expected a string");
    return n.as<std::string>();
  }

  // Relative paths resolve against the directory of the file that holds them (client-go's
  // ResolvePaths), wherever the merged entry is used.
  std::string resolve(const std::string& file) const {
    std::filesystem::path p(file);
    return p.is_absolute() ? file : (dir / p).lexically_normal().string();
  }

  // PEM from `<key>-data` (base64) or from the file named by `<key>` (relative to the kubeconfig).
  // The -data form wins when both are set, as in client-go.
  Result<std::string> pem_field(const YAML::Node& parent, const std::string& parent_name,
                                const std::string& key) const {
    auto data = string_field(parent, parent_name, (key + "-data").c_str());
    if (!data.ok()) return data.error();
    if (!data->empty()) {
      auto decoded = decode_base64(*data);
      if (!decoded) return field_error(field_child(parent_name, key + "-data"), "not valid base64");
      return std::move(*decoded);
    }
    auto file = string_field(parent, parent_name, key.c_str());
    if (!file.ok()) return file.error();
    if (file->empty()) return std::string();
    auto text = read_text_file(resolve(*file));
    if (!text.ok()) return field_error(field_child(parent_name, key), text.error().message);
    return std::move(*text);
  }
};

// A named entry of clusters, users or contexts, and the file that defined it.
struct Entry {
  const KubeconfigReader* file = nullptr;
  YAML::Node body;  // the entry's `cluster:`, `user:` or `context:` map
};

// Every file of the list merged with client-go's rules: the first file to define a name wins
// (later ones cannot change its fields), the first non-empty current-context wins.
struct Merged {
  std::deque<KubeconfigReader> files;  // stable addresses: entries point at their file
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
  const KubeconfigReader* current_from = nullptr;

  std::string paths() const {
    std::string s;
    for (const KubeconfigReader& f : files) s += (s.empty() ? "" : ", ") + f.path;
    return s;
  }

  Status add(const std::string& path, const YAML::Node& root) {
    files.push_back({path, std::filesystem::path(path).parent_path()});
    const KubeconfigReader& r = files.back();
    if (yaml_absent(root)) return ok_status();  // an empty file: client-go reads it as no entries
    if (!root.IsMap()) return r.field_error("(document)", "expected a map");
    auto current = r.string_field(root, "", "current-context");
    if (!current.ok()) return current.error();
    if (current_context.empty() && !current->empty()) {
      current_context = *current;
      current_from = &r;
    }
    for (auto [list, body, into] : {std::tuple{"clusters", "cluster", &clusters}, std::tuple{"users", "user", &users},
                                    std::tuple{"contexts", "context", &contexts}}) {
      YAML::Node entries = root[list];
      if (yaml_absent(entries)) continue;
      if (!entries.IsSequence()) return r.field_error(list, "expected a list");
      for (const YAML::Node& e : entries) {
        if (!e.IsMap() || !e["name"] || !e["name"].IsScalar()) {
          return r.field_error(list, "an entry without a name");
        }
        std::string name = e["name"].as<std::string>();
        YAML::Node b = e[body];
        if (!b || !b.IsMap())
          return r.field_error(field_child(fmt::format("{}[{}]", list, name), body), "missing or not a map");
        into->emplace(name, Entry{&r, b});
      }
    }
    return ok_status();
  }

  static std::string names(const std::map<std::string, Entry>& m) {
    std::string s;
    for (const auto& [name, entry] : m) s += (s.empty() ? "" : ", ") + name;
    return s.empty() ? "none" : s;
  }
};

bool is_true(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return false;
  std::string v = n.as<std::string>();
  return v == "true" || v == "True" || v == "TRUE";
}

// users[NAME].user.exec: client.authentication.k8s.io v1 or v1beta1.
Result<ExecPlugin> parse_exec(const KubeconfigReader& r, const YAML::Node& exec, const std::string& prefix,
                              const std::string& user_name) {
  if (!exec.IsMap()) return r.field_error(prefix, "expected a map");
  ExecPlugin p;
  p.user = fmt::format("users[{}] (kubeconfig {})", user_name, r.path);
  auto api_version = r.string_field(exec, prefix, "apiVersion");
  if (!api_version.ok()) return api_version.error();
  if (*api_version != "client.authentication.k8s.io/v1" && *api_version != "client.authentication.k8s.io/v1beta1") {
    return r.field_error(field_child(prefix, "apiVersion"),
                         fmt::format("{} is not client.authentication.k8s.io/v1 or v1beta1",
                                     api_version->empty() ? "(missing)" : quote_value(*api_version)));
  }
  p.api_version = *api_version;
  auto command = r.string_field(exec, prefix, "command");
  if (!command.ok()) return command.error();
  if (command->empty()) return r.field_error(field_child(prefix, "command"), "missing");
  // A bare name is looked up in PATH; a relative path with a '/' is the kubeconfig's (client-go).
  p.command = command->find('/') == std::string::npos ? *command : r.resolve(*command);
  if (YAML::Node args = exec["args"]; !yaml_absent(args)) {
    if (!args.IsSequence()) return r.field_error(field_child(prefix, "args"), "expected a list of strings");
    for (const YAML::Node& a : args) {
      if (!a.IsScalar()) return r.field_error(field_child(prefix, "args"), "expected a list of strings");
      p.args.push_back(a.as<std::string>());
    }
  }
  if (YAML::Node env = exec["env"]; !yaml_absent(env)) {
    if (!env.IsSequence()) return r.field_error(field_child(prefix, "env"), "expected a list of {name, value}");
    for (const YAML::Node& e : env) {
      if (!e.IsMap() || !e["name"] || !e["name"].IsScalar()) {
        return r.field_error(field_child(prefix, "env"), "expected a list of {name, value}");
      }
      YAML::Node v = e["value"];
      if (!yaml_absent(v) && !v.IsScalar()) return r.field_error(field_child(prefix, "env"), "a value is not a string");
      p.env.emplace_back(e["name"].as<std::string>(), v && v.IsScalar() ? v.as<std::string>() : "");
    }
  }
  auto hint = r.string_field(exec, prefix, "installHint");
  if (!hint.ok()) return hint.error();
  p.install_hint = *hint;
  p.provide_cluster_info = is_true(exec["provideClusterInfo"]);
  auto mode = r.string_field(exec, prefix, "interactiveMode");
  if (!mode.ok()) return mode.error();
  if (*mode == "Always") {
    return r.field_error(field_child(prefix, "interactiveMode"),
                         "Always is refused: iogate runs plugins without a terminal (use Never or IfAvailable)");
  }
  if (!mode->empty() && *mode != "Never" && *mode != "IfAvailable") {
    return r.field_error(field_child(prefix, "interactiveMode"),
                         fmt::format("{} is not Never, IfAvailable or Always", *mode));
  }
  return p;
}

Result<KubeConfig> parse_merged(const Merged& m, std::string_view context_arg) {
  std::string context_name = std::string(context_arg);
  if (context_name.empty()) {
    if (m.current_context.empty()) {
      return usage_error(fmt::format("kubeconfig {}: current-context: not set and no --context given", m.paths()));
    }
    context_name = m.current_context;
  }
  auto context_it = m.contexts.find(context_name);
  if (context_it == m.contexts.end()) {
    std::string where =
        fmt::format("no such context in kubeconfig {} (contexts: {})", m.paths(), Merged::names(m.contexts));
    if (!context_arg.empty()) return usage_error(fmt::format("--context {}: {}", quote_value(context_name), where));
    return m.current_from->field_error("current-context", fmt::format("{}: {}", quote_value(context_name), where));
  }
  const KubeconfigReader& cr = *context_it->second.file;
  const YAML::Node& context = context_it->second.body;
  std::string cprefix = fmt::format("contexts[{}].context", context_name);
  auto cluster_name = cr.string_field(context, cprefix, "cluster");
  if (!cluster_name.ok()) return cluster_name.error();
  auto user_name = cr.string_field(context, cprefix, "user");
  if (!user_name.ok()) return user_name.error();
  auto ns = cr.string_field(context, cprefix, "namespace");
  if (!ns.ok()) return ns.error();
  if (cluster_name->empty()) return cr.field_error(field_child(cprefix, "cluster"), "missing");

  KubeConfig config;
  config.namespace_name = ns->empty() ? "default" : *ns;

  // Cluster: server and CA.
  auto cluster_it = m.clusters.find(*cluster_name);
  if (cluster_it == m.clusters.end()) {
    return cr.field_error(field_child(cprefix, "cluster"),
                          fmt::format("no cluster named {} in kubeconfig {}", quote_value(*cluster_name), m.paths()));
  }
  const KubeconfigReader& kr = *cluster_it->second.file;
  const YAML::Node& cluster = cluster_it->second.body;
  std::string kprefix = fmt::format("clusters[{}].cluster", *cluster_name);
  auto server = kr.string_field(cluster, kprefix, "server");
  if (!server.ok()) return server.error();
  if (server->empty()) return kr.field_error(field_child(kprefix, "server"), "missing");
  if (server->rfind("https://", 0) != 0) {
    return kr.field_error(field_child(kprefix, "server"),
                          fmt::format("{} is not https:// (iogate only talks TLS)", quote_value(*server)));
  }
  config.server = *server;
  if (is_true(cluster["insecure-skip-tls-verify"])) {
    return kr.field_error(field_child(kprefix, "insecure-skip-tls-verify"),
                          "true is refused: iogate always verifies the API server's certificate "
                          "(give certificate-authority or certificate-authority-data)");
  }
  if (cluster["tls-server-name"]) {
    return kr.field_error(field_child(kprefix, "tls-server-name"),
                          "not supported (the server certificate must name the server's host)");
  }
  auto ca = kr.pem_field(cluster, kprefix, "certificate-authority");
  if (!ca.ok()) return ca.error();
  if (ca->empty()) {
    return kr.field_error(kprefix,
                          "no certificate-authority or certificate-authority-data "
                          "(iogate verifies the API server against a configured CA only)");
  }
  config.ca_pem = std::move(*ca);

  // User: a token, a token file, a client certificate or an exec plugin.
  if (user_name->empty()) return cr.field_error(field_child(cprefix, "user"), "missing");
  auto user_it = m.users.find(*user_name);
  if (user_it == m.users.end()) {
    return cr.field_error(field_child(cprefix, "user"),
                          fmt::format("no user named {} in kubeconfig {}", quote_value(*user_name), m.paths()));
  }
  const KubeconfigReader& ur = *user_it->second.file;
  const YAML::Node& user = user_it->second.body;
  std::string uprefix = fmt::format("users[{}].user", *user_name);
  if (user["auth-provider"]) {
    return ur.field_error(field_child(uprefix, "auth-provider"),
                          "not supported (client-go dropped the gcp and azure providers in 1.26: use an exec "
                          "plugin, gke-gcloud-auth-plugin on GKE, kubelogin on AKS)");
  }
  for (const char* unsupported : {"username", "password"}) {
    if (user[unsupported]) {
      return ur.field_error(field_child(uprefix, unsupported),
                            "not supported (use a token, tokenFile, client certificate or exec plugin)");
    }
  }
  auto token = ur.string_field(user, uprefix, "token");
  if (!token.ok()) return token.error();
  config.token = *token;
  auto token_file = ur.string_field(user, uprefix, "tokenFile");
  if (!token_file.ok()) return token_file.error();
  if (!token_file->empty()) {
    config.token_file = ur.resolve(*token_file);
    if (auto t = read_text_file(config.token_file); !t.ok())
      return ur.field_error(field_child(uprefix, "tokenFile"), t.error().message);
  }
  auto cert = ur.pem_field(user, uprefix, "client-certificate");
  if (!cert.ok()) return cert.error();
  auto key = ur.pem_field(user, uprefix, "client-key");
  if (!key.ok()) return key.error();
  if (cert->empty() != key->empty()) {
    return ur.field_error(field_child(uprefix, cert->empty() ? "client-certificate" : "client-key"),
                          "missing (a client certificate needs its key and the key its certificate)");
  }
  config.client_cert_pem = std::move(*cert);
  config.client_key_pem = std::move(*key);
  if (YAML::Node exec = user["exec"]; !yaml_absent(exec)) {
    if (!config.token.empty() || !config.token_file.empty() || !config.client_cert_pem.empty()) {
      return ur.field_error(field_child(uprefix, "exec"),
                            "set together with a token, tokenFile or client certificate: keep one credential");
    }
    auto plugin = parse_exec(ur, exec, field_child(uprefix, "exec"), *user_name);
    if (!plugin.ok()) return plugin.error();
    config.exec = std::move(*plugin);
  }
  if (config.token.empty() && config.token_file.empty() && config.client_cert_pem.empty() && !config.exec) {
    return ur.field_error(uprefix, "no token, tokenFile, client certificate or exec plugin");
  }

  config.description = fmt::format("kubeconfig {} context {} (cluster {}, user {}{})", m.paths(), context_name,
                                   *cluster_name, *user_name, config.exec ? ", exec " + config.exec->command : "");
  return config;
}

}  // namespace

Result<KubeConfig> load_kubeconfigs(const std::vector<std::string>& paths, std::string_view context) {
  Merged merged;
  for (const std::string& path : paths) {
    auto text = read_text_file(path);
    if (!text.ok()) return usage_error("kubeconfig " + text.error().message);
    try {
      if (Status s = merged.add(path, YAML::Load(*text)); !s.ok()) return s.error();
    } catch (const YAML::Exception& e) {
      // e.what() carries "yaml-cpp: error at line L, column C: ..."
      return usage_error(fmt::format("kubeconfig {}: {}", path, e.what()));
    }
  }
  if (merged.files.empty()) return usage_error("kubeconfig: no file given");
  return parse_merged(merged, context);
}

Result<KubeConfig> load_kubeconfig(const std::string& path, std::string_view context) {
  return load_kubeconfigs({path}, context);
}

}  // namespace iogate
