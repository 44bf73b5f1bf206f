#include <doctest/doctest.h>

#include "kube/kube_config.h"
#include "service_account_dir.h"

namespace iogate {
namespace {

using testing::ServiceAccountDir;
using testing::TempTree;

const char* kCa = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";
// base64 of kCa, as kubectl writes certificate-authority-data.
std::string ca_data() { return "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"; }

std::string kubeconfig(const std::string& cluster_body, const std::string& user_body,
                       const std::string& current = "ctx", const std::string& ns_line = "") {
  return "apiVersion: v1\nkind: Config\n"
         "clusters:\n- name: c1\n  cluster:\n" +
         cluster_body + "contexts:\n- name: ctx\n  context:\n    cluster: c1\n    user: u1\n" + ns_line +
         "- name: other\n  context:\n    cluster: c1\n    user: u1\n    namespace: other-ns\n"
         "current-context: " +
         current +
         "\n"
         "users:\n- name: u1\n  user:\n" +
         user_body;
}

const std::string kServer = "    server: https://10.0.0.1:6443\n";

TEST_CASE("kubeconfig: certificate-authority-data and token") {
  TempTree dir;
  std::string path = dir.write("config", kubeconfig(kServer + "    certificate-authority-data: " + ca_data() + "\n",
                                                    "    token: sekret\n", "ctx", "    namespace: ml\n"));
  auto c = load_kubeconfig(path);
  REQUIRE(c.ok());
  CHECK(c->server == "https://10.0.0.1:6443");
  CHECK(c->ca_pem == kCa);
  CHECK(c->token == "sekret");
  CHECK(c->token_file.empty());
  CHECK(c->client_cert_pem.empty());
  CHECK(c->namespace_name == "ml");
  CHECK_FALSE(c->in_cluster);
  CHECK(c->description.find("context ctx") != std::string::npos);
  CHECK(c->description.find("sekret") == std::string::npos);
}

TEST_CASE("kubeconfig: file fields resolve against the kubeconfig's directory") {
  TempTree dir;
  dir.write("kube/pki/ca.crt", kCa);
  dir.write("kube/pki/client.crt", "CERT PEM");
  dir.write("kube/pki/client.key", "KEY PEM");
  std::string path = dir.write("kube/config", kubeconfig(kServer + "    certificate-authority: pki/ca.crt\n",
                                                         "    client-certificate: pki/client.crt\n"
                                                         "    client-key: " +
                                                             dir.path("kube/pki/client.key") + "\n"));
  auto c = load_kubeconfig(path);
  REQUIRE(c.ok());
  CHECK(c->ca_pem == kCa);
  CHECK(c->client_cert_pem == "CERT PEM");
  CHECK(c->client_key_pem == "KEY PEM");
  CHECK(c->token.empty());
  CHECK(c->namespace_name == "default");
}

TEST_CASE("kubeconfig: -data wins over the file field, as in client-go") {
  TempTree dir;
  std::string path = dir.write("config", kubeconfig(kServer +
                                                        "    certificate-authority: /nonexistent/ca.crt\n"
                                                        "    certificate-authority-data: " +
                                                        ca_data() + "\n",
                                                    "    token: t\n"));
  auto c = load_kubeconfig(path);
  REQUIRE(c.ok());
  CHECK(c->ca_pem == kCa);
}

TEST_CASE("kubeconfig: tokenFile is kept as a path, relative to the kubeconfig") {
  TempTree dir;
  dir.write("token", "abc\n");
  std::string path = dir.write(
      "config", kubeconfig(kServer + "    certificate-authority-data: " + ca_data() + "\n", "    tokenFile: token\n"));
  auto c = load_kubeconfig(path);
  REQUIRE(c.ok());
  CHECK(c->token_file == dir.path("token"));
  CHECK(c->token.empty());
}

TEST_CASE("kubeconfig: an explicit context overrides current-context") {
  TempTree dir;
  std::string path = dir.write(
      "config", kubeconfig(kServer + "    certificate-authority-data: " + ca_data() + "\n", "    token: t\n"));
  auto c = load_kubeconfig(path, "other");
  REQUIRE(c.ok());
  CHECK(c->namespace_name == "other-ns");
  CHECK(c->description.find("context other") != std::string::npos);
}

TEST_CASE("kubeconfig: errors name the file and the field") {
  TempTree dir;
  std::string ca = "    certificate-authority-data: " + ca_data() + "\n";
  struct Case {
    std::string text;
    std::string context;
    std::string expected;
  } cases[] = {
      {kubeconfig(kServer + ca, "    token: t\n", "missing"), "",
       "current-context: \"missing\": no such context in kubeconfig"},
      {kubeconfig(kServer + ca, "    token: t\n"), "nope", "--context \"nope\": no such context in kubeconfig"},
      {kubeconfig(kServer + ca, "    token: t\n", "\"\""), "", "current-context: not set"},
      {kubeconfig(kServer + ca + "    insecure-skip-tls-verify: true\n", "    token: t\n"), "",
       "clusters[c1].cluster.insecure-skip-tls-verify: true is refused"},
      {kubeconfig(kServer, "    token: t\n"), "", "clusters[c1].cluster: no certificate-authority"},
      {kubeconfig("    server: http://10.0.0.1:8080\n" + ca, "    token: t\n"), "",
       "clusters[c1].cluster.server: \"http://10.0.0.1:8080\" is not https://"},
      {kubeconfig(ca, "    token: t\n"), "", "clusters[c1].cluster.server: missing"},
      {kubeconfig(kServer + "    certificate-authority-data: not*base64\n", "    token: t\n"), "",
       "certificate-authority-data: not valid base64"},
      {kubeconfig(kServer + "    certificate-authority: nothere.crt\n", "    token: t\n"), "",
       "clusters[c1].cluster.certificate-authority: "},
      {kubeconfig(kServer + ca, "    client-certificate-data: " + ca_data() + "\n"), "",
       "users[u1].user.client-key: missing"},
      {kubeconfig(kServer + ca, "    exec:\n      command: aws\n"), "",
       "users[u1].user.exec.apiVersion: (missing) is not client.authentication.k8s.io/v1 or v1beta1"},
      {kubeconfig(kServer + ca,
                  "    exec:\n      apiVersion: client.authentication.k8s.io/v1alpha1\n      command: aws\n"),
       "", "users[u1].user.exec.apiVersion: \"client.authentication.k8s.io/v1alpha1\" is not"},
      {kubeconfig(kServer + ca, "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"), "",
       "users[u1].user.exec.command: missing"},
      {kubeconfig(kServer + ca,
                  "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: kubelogin\n"
                  "      interactiveMode: Always\n"),
       "", "users[u1].user.exec.interactiveMode: Always is refused"},
      {kubeconfig(kServer + ca,
                  "    token: t\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n"),
       "", "users[u1].user.exec: set together with a token"},
      {kubeconfig(kServer + ca, "    auth-provider:\n      name: gcp\n"), "",
       "users[u1].user.auth-provider: not supported (client-go dropped the gcp and azure providers in 1.26: use an "
       "exec plugin, gke-gcloud-auth-plugin on GKE, kubelogin on AKS)"},
      {kubeconfig(kServer + ca, "    {}\n"), "",
       "users[u1].user: no token, tokenFile, client certificate or exec plugin"},
      {"clusters: [unclosed\n", "", "kubeconfig "},
  };
  for (const Case& c : cases) {
    CAPTURE(c.expected);
    std::string path = dir.write("config", c.text);
    auto r = load_kubeconfig(path, c.context);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(c.expected) != std::string::npos);
    CHECK(r.error().message.find(path) != std::string::npos);
    CHECK(r.error().message.find('\n') == std::string::npos);
  }
}

TEST_CASE("kubeconfig: insecure-skip-tls-verify false is harmless") {
  TempTree dir;
  std::string path = dir.write("config", kubeconfig(kServer + "    certificate-authority-data: " + ca_data() +
                                                        "\n    insecure-skip-tls-verify: false\n",
                                                    "    token: t\n"));
  CHECK(load_kubeconfig(path).ok());
}

TEST_CASE("in-cluster: the kubelet's ..data layout") {
  TempTree dir;
  ServiceAccountDir sa(dir);
  sa.publish("token-1\n", kCa, "ml-jobs");
  KubeEnvironment env;
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  env.service_account_dir = dir.root.string();
  auto c = load_in_cluster_config(env);
  REQUIRE(c.ok());
  CHECK(c->in_cluster);
  CHECK(c->server == "https://10.96.0.1:443");
  CHECK(c->ca_pem == kCa);
  CHECK(c->token_file == dir.path("token"));
  CHECK(c->token.empty());  // kept as a path: it rotates
  CHECK(c->namespace_name == "ml-jobs");
  CHECK(c->description.find("KUBERNETES_SERVICE_HOST=10.96.0.1") != std::string::npos);
  CHECK(c->description.find("token-1") == std::string::npos);
}

TEST_CASE("in-cluster: IPv6 host, missing namespace, missing token") {
  TempTree dir;
  ServiceAccountDir sa(dir);
  sa.publish("t", kCa, "");
  KubeEnvironment env;
  env.service_host = "fd00::1";
  env.service_port = "443";
  env.service_account_dir = dir.root.string();
  auto c = load_in_cluster_config(env);
  REQUIRE(c.ok());
  CHECK(c->server == "https://[fd00::1]:443");
  CHECK(c->namespace_name == "default");

  env.service_account_dir = dir.path("absent");
  auto missing = load_in_cluster_config(env);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("ca.crt") != std::string::npos);

  env.service_port = "";
  auto no_port = load_in_cluster_config(env);
  REQUIRE_FALSE(no_port.ok());
  CHECK(no_port.error().message.find("KUBERNETES_SERVICE_PORT") != std::string::npos);
}

TEST_CASE("discovery: in-cluster first, then KUBECONFIG's existing files, then ~/.kube/config") {
  TempTree dir;
  std::string text = kubeconfig(kServer + "    certificate-authority-data: " + ca_data() + "\n", "    token: t\n");
  std::string home_config = dir.write("home/.kube/config", text);
  std::string env_config = dir.write("env/config", text);
  ServiceAccountDir sa(dir);
  sa.publish("t", kCa, "ns");

  KubeEnvironment env;
  env.home = dir.path("home");
  env.service_account_dir = dir.root.string();

  auto from_home = discover_kube_config(env);
  REQUIRE(from_home.ok());
  REQUIRE(from_home->has_value());
  CHECK((*from_home)->description.find(home_config) != std::string::npos);

  env.kubeconfig_env = dir.path("missing") + ":" + env_config + ":" + home_config;
  auto from_env = discover_kube_config(env);
  REQUIRE(from_env.ok());
  REQUIRE(from_env->has_value());
  CHECK((*from_env)->description.find(env_config) != std::string::npos);
  CHECK((*from_env)->description.find(dir.path("missing")) == std::string::npos);  // skipped, as kubectl does

  env.service_host = "10.96.0.1";
  env.service_port = "443";
  auto in_cluster = discover_kube_config(env);
  REQUIRE(in_cluster.ok());
  REQUIRE(in_cluster->has_value());
  CHECK((*in_cluster)->in_cluster);
}

TEST_CASE("discovery: nothing configured is not an error") {
  TempTree dir;
  KubeEnvironment env;
  env.home = dir.path("nohome");
  auto none = discover_kube_config(env);
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  env.kubeconfig_env = dir.path("a") + ":" + dir.path("b");
  auto none2 = discover_kube_config(env);
  REQUIRE(none2.ok());
  CHECK_FALSE(none2->has_value());
}

TEST_CASE("discovery: a broken kubeconfig is an error, not silence") {
  TempTree dir;
  KubeEnvironment env;
  env.kubeconfig_env = dir.write("config", "current-context: x\n");
  auto r = discover_kube_config(env);
  CHECK_FALSE(r.ok());
}

// Two files as people split them: the cluster and its context in one, the user (and its
// credential files) in another.
struct SplitKubeconfig {
  TempTree dir;
  std::string cluster_file, user_file;
  SplitKubeconfig(const std::string& user_body = "    tokenFile: token\n", const std::string& cluster_current = "",
                  const std::string& user_current = "ctx") {
    dir.write("a/pki/ca.crt", kCa);
    dir.write("b/token", "from-b-file\n");
    cluster_file = dir.write("a/config",
                             "apiVersion: v1\nkind: Config\n"
                             "clusters:\n- name: c1\n  cluster:\n" +
                                 kServer +
                                 "    certificate-authority: pki/ca.crt\n"
                                 "contexts:\n- name: ctx\n  context:\n    cluster: c1\n    user: u1\n"
                                 "- name: ctx2\n  context:\n    cluster: c1\n    user: u2\n    namespace: two\n" +
                                 (cluster_current.empty() ? "" : "current-context: " + cluster_current + "\n"));
    user_file = dir.write("b/config", "apiVersion: v1\nkind: Config\ncurrent-context: " + user_current +
                                          "\nusers:\n- name: u1\n  user:\n" + user_body +
                                          "- name: u2\n  user:\n    token: u2-token\n"
                                          // A later file cannot redefine an entry the first one has.
                                          "clusters:\n- name: c1\n  cluster:\n    server: https://evil.example:6443\n"
                                          "    certificate-authority-data: " +
                                          ca_data() + "\n");
  }
  std::string list() const { return cluster_file + ":" + dir.path("missing/config") + ":" + user_file; }
};

TEST_CASE("KUBECONFIG: every file merged, first entry and first current-context win, paths per file") {
  SplitKubeconfig k;
  KubeEnvironment env;
  env.kubeconfig_env = k.list();
  auto r = discover_kube_config(env);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  const KubeConfig& c = **r;
  CHECK(c.server == "https://10.0.0.1:6443");                     // a's c1, not b's
  CHECK(c.ca_pem == kCa);                                         // a's pki/ca.crt, against a's directory
  CHECK(c.token_file == k.dir.path("b/token"));                   // b's tokenFile, against b's directory
  CHECK(c.description.find("context ctx") != std::string::npos);  // b's current-context (a sets none)
  CHECK(c.description.find(k.cluster_file) != std::string::npos);
  CHECK(c.description.find(k.user_file) != std::string::npos);

  // The first non-empty current-context wins: a's, when it has one.
  SplitKubeconfig k2("    tokenFile: token\n", "ctx2", "ctx");
  env.kubeconfig_env = k2.list();
  auto r2 = discover_kube_config(env);
  REQUIRE(r2.ok());
  CHECK((*r2)->namespace_name == "two");
  CHECK((*r2)->token == "u2-token");
}

TEST_CASE("--context: picks the context across files; a missing one names it and every file read") {
  SplitKubeconfig k;
  KubeEnvironment env;
  env.kubeconfig_env = k.list();
  auto r = discover_kube_config(env, "ctx2");
  REQUIRE(r.ok());
  CHECK((*r)->token == "u2-token");
  CHECK((*r)->namespace_name == "two");

  auto missing = discover_kube_config(env, "prod");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::kUsage);
  const std::string& m = missing.error().message;
  CHECK(m.find("--context \"prod\": no such context in kubeconfig " + k.cluster_file + ", " + k.user_file) !=
        std::string::npos);
  CHECK(m.find("(contexts: ctx, ctx2)") != std::string::npos);

  // --kubeconfig reads that file alone, as kubectl does: the user is not there.
  auto alone = load_kubeconfig(k.cluster_file, "ctx");
  REQUIRE_FALSE(alone.ok());
  CHECK(alone.error().message.find("contexts[ctx].context.user: no user named \"u1\" in kubeconfig " +
                                   k.cluster_file) != std::string::npos);
}

TEST_CASE("--context: in-cluster, or with no kubeconfig, is a usage error naming the flag") {
  TempTree dir;
  ServiceAccountDir sa(dir);
  sa.publish("t", kCa, "ns");
  KubeEnvironment env;
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  env.service_account_dir = dir.root.string();
  auto in_cluster = discover_kube_config(env, "ctx");
  REQUIRE_FALSE(in_cluster.ok());
  CHECK(in_cluster.error().kind == ErrorKind::kUsage);
  CHECK(in_cluster.error().message.find("--context ctx: in-cluster") != std::string::npos);

  KubeEnvironment none;
  none.home = dir.path("nohome");
  auto nothing = discover_kube_config(none, "ctx");
  REQUIRE_FALSE(nothing.ok());
  CHECK(nothing.error().kind == ErrorKind::kUsage);
  CHECK(nothing.error().message.find("--context ctx: no kubeconfig to find it in (" + dir.path("nohome") +
                                     "/.kube/config does not exist)") != std::string::npos);
}

TEST_CASE("KUBECONFIG: a refusal names the field and the file that defined the entry") {
  TempTree dir;
  std::string a = dir.write("a",
                            "current-context: ctx\ncontexts:\n- name: ctx\n  context:\n    cluster: c1\n"
                            "    user: u1\nusers:\n- name: u1\n  user:\n    token: t\n");
  std::string b =
      dir.write("b", "clusters:\n- name: c1\n  cluster:\n" + kServer + "    insecure-skip-tls-verify: true\n");
  KubeEnvironment env;
  env.kubeconfig_env = a + ":" + b;
  auto r = discover_kube_config(env);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "kubeconfig " + b +
            ": clusters[c1].cluster.insecure-skip-tls-verify: true is refused: iogate always verifies the API "
            "server's certificate (give certificate-authority or certificate-authority-data)");
}

TEST_CASE("kubeconfig: an exec plugin's fields; a relative command resolves against its file") {
  SplitKubeconfig k(
      "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./bin/get-token\n"
      "      args: [--cluster, c1]\n      env:\n      - name: AWS_PROFILE\n        value: ml\n"
      "      installHint: install get-token\n      provideClusterInfo: true\n      interactiveMode: Never\n");
  auto c = load_kubeconfigs({k.cluster_file, k.user_file});
  REQUIRE(c.ok());
  REQUIRE(c->exec);
  const ExecPlugin& p = *c->exec;
  CHECK(p.api_version == "client.authentication.k8s.io/v1");
  CHECK(p.command == k.dir.path("b/bin/get-token"));
  CHECK(p.args == std::vector<std::string>{"--cluster", "c1"});
  REQUIRE(p.env.size() == 1);
  CHECK(p.env[0] == std::pair<std::string, std::string>{"AWS_PROFILE", "ml"});
  CHECK(p.install_hint == "install get-token");
  CHECK(p.provide_cluster_info);
  CHECK(p.user == "users[u1] (kubeconfig " + k.user_file + ")");
  CHECK(c->token.empty());

  SplitKubeconfig bare("    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n");
  auto b = load_kubeconfigs({bare.cluster_file, bare.user_file});
  REQUIRE(b.ok());
  CHECK(b->exec->command == "aws");  // a bare name: PATH's
  CHECK_FALSE(b->exec->provide_cluster_info);
}

}  // namespace
}  // namespace iogate
