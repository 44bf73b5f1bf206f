// `iogate webhook check` (the chart's `helm test`): proves that the API server can call the
// webhook, the one thing an install cannot show by itself. A webhook the API server cannot reach
// (a private GKE control plane allowed only some ports to the nodes; a CNI whose pod network the
// control plane is not on, as on EKS with Calico or Cilium) refuses every judged pod (validate
// fails closed) and leaves the others unsteered, and nothing says so at install.
//
// The check asks the API server to create, as a server-side dry run (dryRun=All: admission runs
// in full, nothing is stored), a pod the webhook judges: a GPU request, annotated
// iogate.io/inject-preflight so that /mutate changes it in every policy mode (off included). The
// answer is judged:
//   - the pod comes back with the injected iogate-preflight initContainer: /mutate was called and
//     /validate admitted it: pass;
//   - refused by mutate.iogate.io or validate.iogate.io: the webhook was called (and judged): pass,
//     with its message;
//   - "failed calling webhook": the API server could not reach it: fail, quoting the API server's
//     error and naming what to change (webhook.port, webhook.hostNetwork, the firewall rule);
//   - admitted without the initContainer: the API server did not call /mutate (its failurePolicy
//     Ignore hides why), or the namespace is not one webhook.namespaceSelector selects: fail;
//   - the namespace does not exist (404): fail, naming tests.namespace;
//   - any other refusal (RBAC, a quota, Pod Security): fail with the API's error.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "kube/api_client.h"

namespace iogate {

struct WebhookCheckOptions {
  std::string ns = "default";                   // a namespace the webhook's namespaceSelector selects
  std::string gpu_resource = "nvidia.com/gpu";  // what the dry-run pod requests one of
};

// The dry-run pod: generateName iogate-webhook-check-, one container requesting one GPU and
// mounting an emptyDir "data" at /data, annotated iogate.io/inject-preflight: data, and a
// restricted securityContext so that Pod Security admission at any level passes it.
nlohmann::json webhook_check_pod(const WebhookCheckOptions& options);

// The verdict on the API server's answer to the dry-run create (pure): the line to print on a
// pass, else an error whose message says what failed and which value to change.
Result<std::string> judge_webhook_check(const ApiResult<nlohmann::json>& answer, const WebhookCheckOptions& options);

// POST /api/v1/namespaces/NS/pods?dryRun=All of webhook_check_pod, judged.
Result<std::string> check_webhook(ApiClient& api, const WebhookCheckOptions& options);

}  // namespace iogate
