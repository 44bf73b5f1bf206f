// Kubeconfig files (clientcmd's format): one file, one context, the fields iogate can honour.
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include <fmt/format.h>

#include "base/base64.h"
#include "base/quote.h"
#include "base/text_file.h"
#include "kube/kube_config.h"

namespace iogate {
namespace {

// Errors carry the kubeconfig's path and the field, e.g.
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
    if (!n || n.IsNull()) return std::string();
    if (!n.IsScalar()) return field_error(parent_name + "." + key, "expected a string");
    return n.as<std::string>();
  }

  // The entry of a named list (clusters, users, contexts) whose name is `name`, as its body.
  Result<YAML::Node> named_entry(const YAML::Node& root, const char* list, const char* body,
                                 const std::string& name) const {
    YAML::Node entries = root[list];
    if (entries && !entries.IsNull() && !entries.IsSequence()) return field_error(list, "expected a list");
    if (entries) {
      for (const YAML::Node& e : entries) {
        if (e.IsMap() && e["name"] && e["name"].IsScalar() && e["name"].as<std::string>() == name) {
          YAML::Node b = e[body];
          if (!b || !b.IsMap()) return field_error(fmt::format("{}[{}].{}", list, name, body), "missing or not a map");
          return b;
        }
      }
    }
    return field_error(list, fmt::format("no entry named {}", quote_value(name)));
  }

  std::string resolve(const std::string& file) const {
    std::filesystem::path p(file);
    return p.is_absolute() ? file : (dir / p).string();
  }

  // PEM from `<key>-data` (base64) or from the file named by `<key>` (relative to the kubeconfig).
  // The -data form wins when both are set, as in client-go.
  Result<std::string> pem_field(const YAML::Node& parent, const std::string& parent_name,
                                const std::string& key) const {
    auto data = string_field(parent, parent_name, (key + "-data").c_str());
    if (!data.ok()) return data.error();
    if (!data->empty()) {
      auto decoded = decode_base64(*data);
      if (!decoded) return field_error(parent_name + "." + key + "-data", "not valid base64");
      return std::move(*decoded);
    }
    auto file = string_field(parent, parent_name, key.c_str());
    if (!file.ok()) return file.error();
    if (file->empty()) return std::string();
    auto text = read_text_file(resolve(*file));
    if (!text.ok()) return field_error(parent_name + "." + key, text.error().message);
    return std::move(*text);
  }
};

Result<KubeConfig> parse_kubeconfig(const KubeconfigReader& r, const YAML::Node& root, std::string_view context_arg) {
  if (!root.IsMap()) return r.field_error("(document)", "expected a map");
  auto current = r.string_field(root, "", "current-context");
  if (!current.ok()) return current.error();
  std::string context_name = context_arg.empty() ? *current : std::string(context_arg);
  if (context_name.empty()) return r.field_error("current-context", "not set and no context given");

  auto context = r.named_entry(root, "contexts", "context", context_name);
  if (!context.ok()) return context.error();
  std::string cprefix = fmt::format("contexts[{}].context", context_name);
  auto cluster_name = r.string_field(*context, cprefix, "cluster");
  if (!cluster_name.ok()) return cluster_name.error();
  auto user_name = r.string_field(*context, cprefix, "user");
  if (!user_name.ok()) return user_name.error();
  auto ns = r.string_field(*context, cprefix, "namespace");
  if (!ns.ok()) return ns.error();
  if (cluster_name->empty()) return r.field_error(cprefix + ".cluster", "missing");

  KubeConfig config;
  config.namespace_name = ns->empty() ? "default" : *ns;

  // Cluster: server and CA.
  auto cluster = r.named_entry(root, "clusters", "cluster", *cluster_name);
  if (!cluster.ok()) return cluster.error();
  std::string kprefix = fmt::format("clusters[{}].cluster", *cluster_name);
  auto server = r.string_field(*cluster, kprefix, "server");
  if (!server.ok()) return server.error();
  if (server->empty()) return r.field_error(kprefix + ".server", "missing");
  if (server->rfind("https://", 0) != 0) {
    return r.field_error(kprefix + ".server",
                         fmt::format("{} is not https:// (iogate only talks TLS)", quote_value(*server)));
  }
  config.server = *server;
  if (YAML::Node skip = (*cluster)["insecure-skip-tls-verify"]; skip && skip.IsScalar()) {
    std::string v = skip.as<std::string>();
    if (v == "true" || v == "True" || v == "TRUE") {
      return r.field_error(kprefix + ".insecure-skip-tls-verify",
                           "true is refused: iogate always verifies the API server's certificate "
                           "(give certificate-authority or certificate-authority-data)");
    }
  }
  if ((*cluster)["tls-server-name"]) {
    return r.field_error(kprefix + ".tls-server-name",
                         "not supported (the server certificate must name the server's host)");
  }
  auto ca = r.pem_field(*cluster, kprefix, "certificate-authority");
  if (!ca.ok()) return ca.error();
  if (ca->empty()) {
    return r.field_error(kprefix,
                         "no certificate-authority or certificate-authority-data "
                         "(iogate verifies the API server against a configured CA only)");
  }
  config.ca_pem = std::move(*ca);

  // User: a token, a token file or a client certificate.
  if (user_name->empty()) return r.field_error(cprefix + ".user", "missing");
  auto user = r.named_entry(root, "users", "user", *user_name);
  if (!user.ok()) return user.error();
  std::string uprefix = fmt::format("users[{}].user", *user_name);
  for (const char* unsupported : {"exec", "auth-provider", "username", "password"}) {
    if ((*user)[unsupported]) {
      return r.field_error(uprefix + "." + unsupported, "not supported (use a token, tokenFile or client certificate)");
    }
  }
  auto token = r.string_field(*user, uprefix, "token");
  if (!token.ok()) return token.error();
  config.token = *token;
  auto token_file = r.string_field(*user, uprefix, "tokenFile");
  if (!token_file.ok()) return token_file.error();
  if (!token_file->empty()) {
    config.token_file = r.resolve(*token_file);
    if (auto t = read_text_file(config.token_file); !t.ok())
      return r.field_error(uprefix + ".tokenFile", t.error().message);
  }
  auto cert = r.pem_field(*user, uprefix, "client-certificate");
  if (!cert.ok()) return cert.error();
  auto key = r.pem_field(*user, uprefix, "client-key");
  if (!key.ok()) return key.error();
  if (cert->empty() != key->empty()) {
    return r.field_error(uprefix + (cert->empty() ? ".client-certificate" : ".client-key"),
                         "missing (a client certificate needs its key and the key its certificate)");
  }
  config.client_cert_pem = std::move(*cert);
  config.client_key_pem = std::move(*key);
  if (config.token.empty() && config.token_file.empty() && config.client_cert_pem.empty()) {
    return r.field_error(uprefix, "no token, tokenFile or client certificate");
  }

  config.description =
      fmt::format("kubeconfig {} context {} (cluster {}, user {})", r.path, context_name, *cluster_name, *user_name);
  return config;
}

}  // namespace

Result<KubeConfig> load_kubeconfig(const std::string& path, std::string_view context) {
  auto text = read_text_file(path);
  if (!text.ok()) return usage_error("kubeconfig " + text.error().message);
  KubeconfigReader reader{path, std::filesystem::path(path).parent_path()};
  try {
    YAML::Node root = YAML::Load(*text);
    return parse_kubeconfig(reader, root, context);
  } catch (const YAML::Exception& e) {
    // e.what() carries "yaml-cpp: error at line L, column C: ..."
    return usage_error(fmt::format("kubeconfig {}: {}", path, e.what()));
  }
}

}  // namespace iogate
