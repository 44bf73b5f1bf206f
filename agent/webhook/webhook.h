// iogate webhook: the admission webhook that keeps GPU pods off storage below policy.
//
// Wiring only: the policy, the serving certificate (re-read when cert-manager rotates it), the
// Kubernetes client for node look-ups (a list+watch of the nodes, per-name GETs behind a short cache
// where it is not current), and the HTTPS server whose /mutate and
// /validate call the pure decisions of webhook/admission.h. Every request is answered within
// --request-deadline (kept below the webhook configuration's timeoutSeconds): a node look-up that
// cannot finish in time counts as a failed look-up, which /validate answers by allowing the pod
// with a warning (fail open on what iogate cannot know; the webhook configuration's
// failurePolicy covers the webhook itself being down).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "base/mode_outcome.h"

namespace iogate {

struct WebhookOptions {
  std::string listen = ":8443";
  // Plain HTTP for /metrics and /healthz (webhook/webhook_metrics via http/get_server.h), apart
  // from the TLS port the API server calls; "" or "none": no metrics listener.
  std::string metrics_listen = ":9561";
  std::string tls_cert, tls_key;
  std::string policy;  // a file, or profile:NAME
  std::string kubeconfig;
  std::string kube_context;  // --context: the kubeconfig's context (default: its current-context)
  bool no_api = false;
  std::chrono::milliseconds request_deadline{8000};
  // Node look-ups: a list+watch of all nodes (node_watch), answered from memory while its watch is
  // open or down for no longer than node_watch_max_lag; per-name GETs kept node_cache_ttl
  // otherwise (not synced yet, the watch down longer, or the API refusing to list nodes).
  bool node_watch = true;
  std::chrono::milliseconds node_watch_max_lag{10000};
  std::chrono::milliseconds node_cache_ttl{5000};
  std::chrono::milliseconds cert_check_interval{10000};
  std::string preflight_image;
  std::string policy_configmap = "iogate-policy";
  std::map<std::string, std::string> preflight_requests, preflight_limits;  // "cpu" → "1"
  std::vector<std::string> gpu_resources;                                   // besides nvidia.com/gpu and amd.com/gpu
};

// Serves until `stop`, then a result (kOk, no report). An Error when it cannot begin: a usage
// error for a bad flag, policy, certificate, kubeconfig or listen address, a runtime error when
// the server cannot start otherwise.
ModeOutcome run_webhook(const WebhookOptions& options, const std::atomic<bool>& stop);

}  // namespace iogate
