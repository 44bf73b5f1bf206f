#include "webhook/webhook_check.h"

#include <fmt/format.h>

#include "base/json_fields.h"
#include "webhook/admission.h"

namespace iogate {
namespace {

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

bool has_preflight(const nlohmann::json& pod) {
  for (const nlohmann::json& c : array_at(object_at(pod, "spec"), "initContainers")) {
    if (string_at(c, "name") == kPreflightContainerName) return true;
  }
  return false;
}

// What to change when the API server cannot reach the webhook's pods, after its own error.
constexpr const char* kReachHelp =
    "the API server calls the webhook's Service on port 443, which forwards to the webhook pods on "
    "the chart value webhook.port. Where the control plane may reach the nodes only on some ports "
    "(private GKE: 443 and 10250), add a firewall rule from the control plane's range to the nodes on "
    "webhook.port, or set webhook.port to a port it already allows (10250, with webhook.hostNetwork=false: "
    "on the host network 10250 is the kubelet's). Where the control plane is not on the pod network "
    "(EKS with a custom CNI such as Calico or Cilium in overlay mode), set webhook.hostNetwork=true";

}  // namespace

nlohmann::json webhook_check_pod(const WebhookCheckOptions& o) {
  nlohmann::json restricted = {
      {"allowPrivilegeEscalation", false}, {"readOnlyRootFilesystem", true}, {"capabilities", {{"drop", {"ALL"}}}}};
  nlohmann::json container = {
      {"name", "check"},
      {"image", "registry.k8s.io/pause:3.10"},
      {"resources", {{"limits", {{o.gpu_resource, "1"}}}, {"requests", {{o.gpu_resource, "1"}}}}},
      {"volumeMounts", {{{"name", "data"}, {"mountPath", "/data"}}}},
      {"securityContext", restricted}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"generateName", "iogate-webhook-check-"},
            {"labels", {{"app.kubernetes.io/name", "iogate"}, {"app.kubernetes.io/component", "webhook-check"}}},
            {"annotations", {{kInjectPreflightAnnotation, "data"}}}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"automountServiceAccountToken", false},
            {"securityContext",
             {{"runAsNonRoot", true}, {"runAsUser", 65532}, {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
            {"containers", {container}},
            {"volumes", {{{"name", "data"}, {"emptyDir", nlohmann::json::object()}}}}}}};
}

Result<std::string> judge_webhook_check(const ApiResult<nlohmann::json>& answer, const WebhookCheckOptions& o) {
  if (answer.ok()) {
    if (has_preflight(*answer)) {
      return fmt::format(
          "webhook: the API server called iogate's webhook: a dry-run pod requesting {} in namespace {} came back "
          "mutated by mutate.iogate.io (the {} initContainer injected) and admitted by validate.iogate.io",
          o.gpu_resource, o.ns, kPreflightContainerName);
    }
    return runtime_error(fmt::format(
        "webhook: the API server admitted a dry-run pod requesting {} in namespace {} without calling iogate's "
        "mutating webhook (no {} initContainer injected). Either namespace {} is not one the webhook's "
        "namespaceSelector selects (chart values webhook.namespaceSelector and webhook.excludeNamespaces; the "
        "release's namespace and kube-system never are; tests.namespace names the namespace this check uses), or "
        "the call failed and mutate's failurePolicy Ignore hid it: then {}",
        o.gpu_resource, o.ns, kPreflightContainerName, o.ns, kReachHelp));
  }
  const ApiError& e = answer.error();
  const std::string quoted = e.summary();
  if (contains(e.message, "admission webhook \"mutate.iogate.io\" denied") ||
      contains(e.message, "admission webhook \"validate.iogate.io\" denied")) {
    return fmt::format(
        "webhook: the API server called iogate's webhook, which refused the dry-run pod in namespace {} "
        "(the policy's decision, not a network problem): {}",
        o.ns, e.message);
  }
  if (contains(e.message, "failed calling webhook") && contains(e.message, ".iogate.io")) {
    if (contains(e.message, "no endpoints available") || contains(e.message, "service unavailable")) {
      return runtime_error(fmt::format(
          "webhook: the API server found no ready webhook pod to call ({}): check the webhook's pods "
          "(kubectl get pods -l app.kubernetes.io/component=webhook in the release's namespace), webhook.replicas, "
          "webhook.nodeSelector and webhook.tolerations",
          quoted));
    }
    return runtime_error(
        fmt::format("webhook: the API server could not call iogate's webhook: {}. {}", quoted, kReachHelp));
  }
  if (e.not_found()) {
    return runtime_error(fmt::format(
        "webhook: namespace {} does not exist; name one the webhook's namespaceSelector selects (chart value "
        "tests.namespace): {}",
        o.ns, quoted));
  }
  if (e.http_status == 403 && contains(e.message, "ValidatingAdmissionPolicy")) {
    return runtime_error(fmt::format("webhook: a ValidatingAdmissionPolicy refused the dry-run create: {}", quoted));
  }
  if (e.http_status == 403) {
    return runtime_error(fmt::format(
        "webhook: refused before the webhook was reached (RBAC, Pod Security or a quota in namespace {}; the "
        "check's account may create pods there only as a dry run): {}",
        o.ns, quoted));
  }
  return runtime_error(fmt::format("webhook: the dry-run create failed: {}", quoted));
}

Result<std::string> check_webhook(ApiClient& api, const WebhookCheckOptions& o) {
  auto answer = api.post("/api/v1/namespaces/" + o.ns + "/pods?dryRun=All", webhook_check_pod(o));
  return judge_webhook_check(answer, o);
}

}  // namespace iogate
