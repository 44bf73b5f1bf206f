// A path's checkpoint measured under a policy, what preflight/ and node/ both take: which rules
// ask for it, the checkpoint probe's request (the pod's ranks, the largest rank share as the cap
// of a round), and its figures as the verdict reads them. A volume that refuses writes gets
// figures with a note, which its checkpoint checks fail with: a save there would fail too.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "checkpoint/checkpoint_probe.h"
#include "device/storage_stack.h"
#include "policy/evaluate.h"
#include "policy/policy.h"

namespace iogate {

// The checkpoint probe of ctx.path for the applicable rules with a checkpoint, for the pod's ranks
// (checkpoint_ranks of its GPUs); nullopt when none applies to a volume of `device_class`.
std::optional<CheckpointRequest> policy_checkpoint_request(const Policy& p, const EvaluationContext& ctx,
                                                           DeviceClass device_class);

// Whether an applicable rule checks a figure of the policy's workload (anything but its
// checkpoint and the volume's class); true when no rule applies (the verdict then still reports
// the volume's speed).
bool needs_workload_measurement(const Policy& p, const EvaluationContext& ctx, DeviceClass device_class);

CheckpointFigures checkpoint_figures(const CheckpointProbeResult& r);
// A refusal to write (read-only, permission denied) as figures with a note; nullopt for any
// other error (an I/O error, no space), which the caller reports as the run's failure.
std::optional<CheckpointFigures> checkpoint_refusal(const Error& e, int ranks);

}  // namespace iogate
