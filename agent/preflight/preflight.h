// iogate preflight: the initContainer that gates a pod on its dataset volume.
//
// One pass of the pipeline with Kubernetes at both ends:
//   policy → pod (GPUs, labels, the PVC behind each path) → for each path: a result shared on the
//   PVC, or detect + probe with early stop → evaluate → pod annotations + an Event → the report.
// Everything runs under the policy's deadline. Outside a cluster (no service account, no
// kubeconfig, or --no-api) the same verdict is printed and the API is skipped, saying so.
//
// Failures follow the policy's on_error: a probe or API failure under fail-closed ends kFailed (exit
// 3: the pod does not start, nobody vouched for its storage); under fail-open kOk (exit 0), the
// failure logged, annotated and posted as a Warning Event where the API still answers; either way
// with the report. A bad policy or flag is always a usage error (exit 2): no policy, no on_error.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "base/mode_outcome.h"

namespace iogate {

struct PreflightOptions {
  std::vector<std::string> paths;                  // dataset paths as mounted in this container
  std::string policy;                              // a file, or profile:NAME
  std::string workload, accelerator;               // apply_named_workload's, where given
  std::optional<int> gpus;                         // overrides the pod's GPU count
  std::string pod_name, pod_namespace, node_name;  // downward API: POD_NAME, POD_NAMESPACE, NODE_NAME
  std::string container_name;                      // CONTAINER_NAME: finds our mounts in the pod spec; optional
  std::string kubeconfig;                          // out of cluster; default KUBECONFIG or ~/.kube/config
  std::string kube_context;                        // --context: the kubeconfig's context (default: its current-context)
  bool no_api = false;                             // never talk to the API (dry runs, laptops)
  std::string root = "/";                          // host /proc and /sys, as probe's --root
  bool json = false;                               // --output-format json
};

// The report (schema iogate.preflight/v1, and the human summary) with the verdict's status: kOk
// for pass, warn, off or a fail-open failure, kBelowPolicy, kFailed for a fail-closed failure. An
// Error for a bad policy, kubeconfig or pod spec (a usage error: no on_error applies), after
// recording it on the pod where it could.
ModeOutcome run_preflight(const PreflightOptions& options, const std::atomic<bool>& stop);

}  // namespace iogate
