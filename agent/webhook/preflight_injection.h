// The preflight initContainer the webhook adds on request (annotation iogate.io/inject-preflight:
// "<volume>"), as docs/manual.md's "As an initContainer" writes it by hand:
//   - first in initContainers, so nothing else runs before the volume is judged;
//   - args [preflight, <path>, --policy, /etc/iogate/policy.yaml], where <path> is the mountPath
//     (and subPath) under which the first container mounting the volume sees it, else /data: the
//     path rules' selectors and the pod annotations speak of;
//   - the volume mounted read-only: preflight then reads the files already there (it supports
//     read-only volumes) and writes nothing into the user's data;
//   - the policy from a ConfigMap, as volume iogate-policy (unless the pod has a volume of that
//     name already, which is then used);
//   - env POD_NAME, POD_NAMESPACE, NODE_NAME from the downward API, CONTAINER_NAME;
//   - securityContext: readOnlyRootFilesystem, no privilege escalation, every capability dropped;
//   - resources: WebhookConfig's preflight requests and limits, where given.
// A pod that already has an initContainer named iogate-preflight gets nothing (idempotent).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "webhook/admission.h"

namespace iogate {

// The path preflight will probe for `volume`: the first container's mountPath for it, else /data.
std::string preflight_dataset_path(const nlohmann::json& pod, const std::string& volume);

// Appends the operations to `ops`. An error when the pod has no volume of that name.
Status add_preflight_container(const nlohmann::json& pod, const std::string& volume, const WebhookConfig& config,
                               nlohmann::json& ops);

}  // namespace iogate
