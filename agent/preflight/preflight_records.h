// What preflight writes where people and tools look: the pod's annotations (iogate.io/verdict,
// randread-iops, p99-latency-us, device-class, report), the Event on the pod, the JSON report
// (schema iogate.preflight/v1) and the human summary. Pure functions of the run's results, so
// what lands on the pod is tested without an API server.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mode_outcome.h"
#include "dataset/dataset_probe.h"
#include "kube/operations.h"
#include "policy/evaluate.h"
#include "policy/policy.h"
#include "preflight/job_wide.h"
#include "probe/probe_result.h"

namespace iogate {

inline constexpr const char* kPreflightSchema = "iogate.preflight/v1";
inline constexpr const char* kVerdictAnnotation = "iogate.io/verdict";  // pod_verdict_name of the run
// The annotation iogate.io/report stays well below the API's 256 KiB for all annotations of an
// object together: other controllers annotate pods too.
inline constexpr size_t kReportAnnotationMaxBytes = 16 * 1024;

// Where a path's measurement came from: kProbe, measured now; kShared, a result recorded on the
// PVC by an earlier pod; kJob, measured now by the pods of this pod's job together; kJobShared,
// the job's result, recorded before this pod of it came. result_source_name gives "probe",
// "shared", "job", "job-shared".
enum class ResultSource { kProbe, kShared, kJob, kJobShared };
std::string_view result_source_name(ResultSource s);

// What preflight concluded: the paths' verdict, or kError when it could not judge.
// pod_verdict_name gives "pass", "fail", "warn", "off", "error".
enum class PodVerdict { kPass, kFail, kWarn, kOff, kError };
std::string_view pod_verdict_name(PodVerdict o);

// One dataset path's outcome.
struct PathResult {
  std::string path;
  ResultSource source = ResultSource::kProbe;
  std::string pvc;          // the claim behind the path, "" without one
  std::string shared_from;  // "pod ns/x on node y at 2026-...": where a shared result came from
  std::optional<ProbeResult> probe;
  std::optional<DatasetProbeResult> dataset;  // workload.mode: dataset
  std::optional<JobWideResult> job;           // kJob, kJobShared: the members and their sum
  Measurement measurement;
  Verdict verdict;
};

struct PreflightSummary {
  std::string time;  // RFC 3339 UTC, when preflight started
  PodVerdict outcome = PodVerdict::kError;
  ModeStatus status = ModeStatus::kOk;  // how the run ends; the report states its exit code
  std::string error;                    // the failure, when outcome is kError (or a fail-open failure)
  const Policy* policy = nullptr;
  std::string pod_namespace, pod_name, node_name;
  int gpus = 0;
  std::string gpus_from;  // "pod", "--gpus", or "unknown (no API; pass --gpus)"
  std::string api;        // "ok", "skipped: <why>", "error: <what>"
  std::vector<PathResult> results;
};

// Whether a failure to judge lets the pod start: on_error fail-open, or a mode other than enforce.
bool fails_open(const Policy& p);
// What a failure to judge does to the pod, for the log: "on_error fail-closed: the pod does not
// start", or in warn mode "would block in enforce mode (on_error fail-closed); mode warn: the pod starts".
std::string on_error_text(const Policy& p);

// What enforce mode would have done to a pod that warn mode let start: "preflight would exit 1:
// ..." or, for a failure to judge under fail-closed, "preflight would exit 3: ..."; nullopt where
// enforce would have let it start too. The annotation kWouldBlockAnnotation and the Event say it.
std::optional<std::string> would_block_text(const PreflightSummary& s);

// The result that speaks for the pod: the first failing path, else the slowest one.
const PathResult* deciding_result(const PreflightSummary& s);

// The pod annotations: verdict, the deciding path's figures and a compact report; for a path
// measured as a job, kJobMeasurementAnnotation; in warn mode kWouldBlockAnnotation (removed where
// enforce would not block).
MetadataChanges pod_annotations(const PreflightSummary& s);
// Compact JSON for iogate.io/report, within kReportAnnotationMaxBytes (caveats and then checks of
// passing paths are dropped first when it would not fit; "truncated": true says so).
std::string compact_report(const PreflightSummary& s);

// Normal StoragePolicyMet, Warning StorageBelowPolicy, or Warning StoragePreflightFailed, with
// the numbers and the rule in the note.
EventText pod_event_text(const PreflightSummary& s);

nlohmann::json preflight_report_json(const PreflightSummary& s);
std::string render_preflight_human(const PreflightSummary& s);

}  // namespace iogate
