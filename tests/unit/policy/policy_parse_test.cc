#include <doctest/doctest.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "example_policy.h"
#include "policy/policy.h"
#include "source_tree.h"
#include "temp_tree.h"

using namespace iogate;
using namespace std::chrono_literals;

namespace {

// The same policy as JSON, indented with tabs the way editors save it.
constexpr const char kIssueExampleJson[] =
    "{\n\t\"apiVersion\": \"iogate.io/v1\",\n\t\"kind\": \"StoragePolicy\",\n\t\"mode\": \"enforce\",\n"
    "\t\"on_error\": \"fail-closed\",\n\t\"deadline\": \"60s\",\n"
    "\t\"workload\": {\"rw\": \"randread\", \"bs\": \"4k\", \"iodepth\": 32, \"numjobs\": 1, \"runtime\": \"10s\", "
    "\"size\": \"256m\"},\n"
    "\t\"rules\": [\n\t\t{\"name\": \"gpu-feed\", \"min_iops\": 10000, \"min_iops_per_gpu\": 5000,\n"
    "\t\t \"max_p99_latency\": \"5ms\", \"forbidden_classes\": [\"hdd\"]}\n\t]\n}\n";

const char kHeader[] = "apiVersion: iogate.io/v1\nkind: StoragePolicy\n";

// A policy with kHeader and `body`, expected to fail with exactly `message`.
void expect_error(const std::string& body, const std::string& message) {
  auto p = parse_policy(std::string(kHeader) + body, "t.yaml");
  REQUIRE_MESSAGE(!p.ok(), body);
  CHECK(p.error().kind == ErrorKind::kUsage);
  CHECK(p.error().message == message);
}

void check_issue_example(const Policy& p) {
  CHECK(p.mode == PolicyMode::kEnforce);
  CHECK(p.on_error == OnError::kFailClosed);
  CHECK(p.deadline == 60s);
  CHECK(p.workload.rw == RwMode::kRandRead);
  CHECK(p.workload.block_size == 4096);
  CHECK(p.workload.iodepth == 32);
  CHECK(p.workload.numjobs == 1);
  CHECK(p.workload.runtime == 10s);
  CHECK(p.workload.size == (uint64_t{256} << 20));
  CHECK(p.workload.ramp == 1s);  // not given: the policy default
  REQUIRE(p.rules.size() == 1);
  const Rule& r = p.rules[0];
  CHECK(r.name == "gpu-feed");
  CHECK(r.selector.empty());
  CHECK(r.min_iops == 10000u);
  CHECK(r.min_iops_per_gpu == 5000u);
  CHECK(r.max_p99_latency_ns == 5'000'000u);
  CHECK_FALSE(r.min_bandwidth_bytes_per_s);
  CHECK(r.forbidden_classes == std::vector<DeviceClass>{DeviceClass::kHdd});
  CHECK(r.allowed_classes.empty());
}

}  // namespace

TEST_CASE("the manual's example (examples/policy.yaml) loads as written and means what it says") {
  auto p = parse_policy(testing::example_policy_text(), "example.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->source == "example.yaml");
  check_issue_example(*p);
}

TEST_CASE("the manual shows examples/policy.yaml as it is, without its comment") {
  std::string file = testing::read_source_file("examples/policy.yaml");
  while (file.rfind("#", 0) == 0) file.erase(0, file.find('\n') + 1);
  const std::string manual = testing::read_source_file("docs/manual.md");
  const size_t section = manual.find("\n## Policies\n");
  REQUIRE(section != std::string::npos);
  const std::string fence = "```yaml\n";
  const size_t begin = manual.find(fence, section);
  REQUIRE(begin != std::string::npos);
  const size_t end = manual.find("```\n", begin + fence.size());
  REQUIRE(end != std::string::npos);
  CHECK(manual.substr(begin + fence.size(), end - begin - fence.size()) == file);
}

TEST_CASE("the same policy in JSON, tab-indented, loads the same") {
  auto p = parse_policy(kIssueExampleJson, "example.json");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  check_issue_example(*p);
}

TEST_CASE("defaults: what a minimal policy means") {
  auto p = parse_policy(std::string(kHeader) + "rules: [{name: r, min_iops: 1}]\n", "m.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->mode == PolicyMode::kWarn);  // a policy that names no mode blocks nothing
  CHECK(p->on_error == OnError::kFailClosed);
  CHECK(p->deadline == 60s);
  CHECK(p->result_ttl == 1h);
  CHECK(p->job_gather_window == 20s);
  CHECK(p->early_stop);
  CHECK(p->stop_tolerance == doctest::Approx(0.03));
  CHECK(p->stop_confidence == doctest::Approx(0.95));
  CHECK(p->workload.rw == RwMode::kRandRead);
  CHECK(p->workload.block_size == 4096);
  CHECK(p->workload.iodepth == 32);
  CHECK(p->workload.numjobs == 1);
  CHECK(p->workload.runtime == 10s);
  CHECK(p->workload.ramp == 1s);
  CHECK(p->workload.size == (uint64_t{256} << 20));
  CHECK(p->workload.direct);
}

TEST_CASE("every key of the schema, with its value syntaxes") {
  auto p = parse_policy(std::string(kHeader) + R"(metadata:
  name: vision-team
  namespace: ml
  labels: {team: vision}
mode: warn
on_error: fail-open
deadline: 2m
workload:
  rw: randrw
  rwmixread: 70
  bs: 16k
  iodepth: 8
  numjobs: 2
  runtime: 5s
  ramp: 500ms
  size: 1g
  direct: false
early_stop: {enabled: true, tolerance: 5%, confidence: 0.9}
result_ttl: 30m
job_gather_window: 45s
rules:
  - name: nvme-only
    description: the fast tier
    selector:
      device_classes: [nvme, cloud-block]
      paths: [/data, "/mnt/*/train"]
      pod_labels: {team: vision, "app.kubernetes.io/name": trainer}
    min_bandwidth: 1.5GB/s
    min_bandwidth_per_gpu: 200MiB/s
    allowed_classes: [nvme, cloud-block]
  - name: latency
    max_p99_latency: 500 us
    min_iops_per_gpu: 3000
)",
                        "all.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->name == "vision-team");
  CHECK(p->mode == PolicyMode::kWarn);
  CHECK(p->on_error == OnError::kFailOpen);
  CHECK(p->deadline == 120s);
  CHECK(p->workload.rw == RwMode::kRandRw);
  CHECK(p->workload.rwmixread == 70);
  CHECK(p->workload.block_size == 16384);
  CHECK(p->workload.iodepth == 8);
  CHECK(p->workload.numjobs == 2);
  CHECK(p->workload.runtime == 5s);
  CHECK(p->workload.ramp == 500ms);
  CHECK(p->workload.size == (uint64_t{1} << 30));
  CHECK_FALSE(p->workload.direct);
  CHECK(p->stop_tolerance == doctest::Approx(0.05));
  CHECK(p->stop_confidence == doctest::Approx(0.9));
  CHECK(p->result_ttl == 30min);
  CHECK(p->job_gather_window == 45s);
  REQUIRE(p->rules.size() == 2);
  const Rule& a = p->rules[0];
  CHECK(a.description == "the fast tier");
  CHECK(a.selector.device_classes == std::vector<DeviceClass>{DeviceClass::kNvme, DeviceClass::kCloudBlock});
  CHECK(a.selector.paths == std::vector<std::string>{"/data", "/mnt/*/train"});
  CHECK(a.selector.pod_labels.at("team") == "vision");
  CHECK(a.selector.pod_labels.at("app.kubernetes.io/name") == "trainer");
  CHECK(a.min_bandwidth_bytes_per_s == 1'500'000'000u);
  CHECK(a.min_bandwidth_per_gpu_bytes_per_s == 200u * 1024 * 1024);
  CHECK(a.allowed_classes.size() == 2);
  CHECK(p->rules[1].max_p99_latency_ns == 500'000u);
  CHECK(p->rules[1].min_iops_per_gpu == 3000u);
  CHECK_FALSE(p->rules[1].min_iops);
}

TEST_CASE("a file may start from a built-in profile and override parts of it") {
  auto p = parse_policy(std::string(kHeader) + "profile: image-classification\nmode: warn\nworkload: {runtime: 5s}\n",
                        "derived.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  auto base = builtin_policy("image-classification");
  REQUIRE(base.ok());
  CHECK(p->source == "derived.yaml");
  CHECK(p->profile == "image-classification");
  CHECK(p->mode == PolicyMode::kWarn);
  CHECK(p->workload.runtime == 5s);
  CHECK(p->workload.block_size == base->workload.block_size);  // the rest of the workload stays
  REQUIRE(p->rules.size() == base->rules.size());
  CHECK(p->rules[0].name == base->rules[0].name);

  // Rules given replace the profile's whole list.
  auto q = parse_policy(std::string(kHeader) + "profile: image-classification\nrules: [{name: mine, min_iops: 5}]\n",
                        "q.yaml");
  REQUIRE_MESSAGE(q.ok(), q.error().message);
  REQUIRE(q->rules.size() == 1);
  CHECK(q->rules[0].name == "mine");

  expect_error("profile: imagenet\n",
               "profile: unknown profile \"imagenet\" (built-in profiles: image-training, image-classification, "
               "streaming, llm-pretraining, checkpointing)");
}

TEST_CASE("invalid values name the field path") {
  // The issue's exact message.
  expect_error("rules:\n  - {name: a, min_iops: 1}\n  - {name: b, min_iops: fast}\n",
               "rules[1].min_iops: expected a positive integer, got \"fast\"");
  expect_error("rules: [{name: a, min_iops: -5}]\n", "rules[0].min_iops: expected a positive integer, got \"-5\"");
  expect_error("rules: [{name: a, min_iops: 0}]\n", "rules[0].min_iops: expected a positive integer, got \"0\"");
  expect_error("rules: [{name: a, min_iops: 1.5}]\n", "rules[0].min_iops: expected a positive integer, got \"1.5\"");
  expect_error("rules: [{name: a, min_iops: [1]}]\n", "rules[0].min_iops: expected a positive integer, got a list");
  expect_error("rules: [{name: a, min_iops_per_gpu: }]\n",
               "rules[0].min_iops_per_gpu: expected a positive integer, got nothing");
  expect_error("deadline: soon\nrules: [{name: a, min_iops: 1}]\n",
               "deadline: expected a duration like 10s, 500ms or 2m, got \"soon\"");
  expect_error("deadline: 5x\nrules: [{name: a, min_iops: 1}]\n",
               "deadline: unknown duration unit \"x\" in \"5x\" (use ms, s, m or h)");
  expect_error("rules: [{name: a, max_p99_latency: 5ks}]\n",
               "rules[0].max_p99_latency: unknown duration unit \"ks\" in \"5ks\" (use ms, s, m or h)");
  expect_error("rules: [{name: a, max_p99_latency: 0ms}]\n",
               "rules[0].max_p99_latency: must be more than 0, got \"0ms\"");
  expect_error("rules: [{name: a, min_bandwidth: 500Mb/s}]\n",
               "rules[0].min_bandwidth: expected a bandwidth like 500MB/s, 1.5GB/s, 200MiB/s or bytes a second, got "
               "\"500Mb/s\"");
  expect_error("rules: [{name: a, forbidden_classes: [hdd, ssd]}]\n",
               "rules[0].forbidden_classes[1]: unknown device class \"ssd\", did you mean \"sas-ssd\" or \"sata-ssd\"? "
               "(classes: ram, nvme, nvme-of, sas-ssd, "
               "sata-ssd, virtio, cloud-block, mmc, usb, hdd, network-fs, mixed, unknown)");
  expect_error(
      "rules: [{name: a, selector: {device_classes: [nmve]}}]\n",
      "rules[0].selector.device_classes[0]: unknown device class \"nmve\", did you mean \"nvme\"? (classes: "
      "ram, nvme, nvme-of, sas-ssd, sata-ssd, virtio, cloud-block, mmc, usb, hdd, network-fs, mixed, unknown)");
  expect_error("rules: [{name: a, allowed_classes: []}]\n",
               "rules[0].allowed_classes: expected a non-empty list of device classes, got a list");
  expect_error("rules: [{name: a, min_iops: 1, selector: {paths: [data]}}]\n",
               "rules[0].selector.paths[0]: expected an absolute path like /data (globs allowed), got \"data\"");
  expect_error("rules: [{name: a, min_iops: 1, selector: {pod_labels: {team: [a]}}}]\n",
               "rules[0].selector.pod_labels.team: expected a label value (a string), got a list");
  expect_error("rules: [{name: a, allowed_classes: [nvme], forbidden_classes: [nvme]}]\n",
               "rules[0].forbidden_classes: \"nvme\" is also in allowed_classes");
  expect_error("mode: strict\nrules: [{name: a, min_iops: 1}]\n",
               "mode: expected enforce, warn or off, got \"strict\"");
  expect_error("on_error: ignore\nrules: [{name: a, min_iops: 1}]\n",
               "on_error: expected fail-closed or fail-open, got \"ignore\"");
  expect_error("early_stop: {tolerance: 3}\nrules: [{name: a, min_iops: 1}]\n",
               "early_stop.tolerance: expected a percentage like 3% or a fraction like 0.03, got \"3\"");
  expect_error("early_stop: {tolerance: 80%}\nrules: [{name: a, min_iops: 1}]\n",
               "early_stop.tolerance: must be above 0% and at most 50%, got \"80%\"");
  expect_error("early_stop: {enabled: maybe}\nrules: [{name: a, min_iops: 1}]\n",
               "early_stop.enabled: expected true or false, got \"maybe\"");
}

TEST_CASE("the workload is validated like probe's flags, naming workload fields") {
  expect_error("workload: {rw: randomread}\nrules: [{name: a, min_iops: 1}]\n",
               "workload.rw: unknown workload \"randomread\" (expected randread, randwrite, read, write or randrw)");
  expect_error("workload: {bs: 4q}\nrules: [{name: a, min_iops: 1}]\n",
               "workload.bs: unknown size suffix \"q\" in \"4q\" (use k, m, g or t)");
  expect_error("workload: {bs: 256}\nrules: [{name: a, min_iops: 1}]\n",
               "workload.bs: must be at least 512 bytes, got 256");
  expect_error("workload: {iodepth: 0}\nrules: [{name: a, min_iops: 1}]\n",
               "workload.iodepth: 0 is out of range [1, 4096]");
  expect_error("workload: {numjobs: many}\nrules: [{name: a, min_iops: 1}]\n",
               "workload.numjobs: expected a whole number, got \"many\"");
  expect_error("workload: {runtime: 10ms}\nrules: [{name: a, min_iops: 1}]\n",
               "workload.runtime: must be at least 100ms");
  expect_error("workload: {size: 4k, numjobs: 2}\nrules: [{name: a, min_iops: 1}]\n",
               "workload.size: 4k is smaller than workload.bs × workload.numjobs (4k × 2)");
  expect_error("deadline: 5s\nrules: [{name: a, min_iops: 1}]\n",
               "deadline: 5s is shorter than workload.ramp + workload.runtime (11s); the probe could not finish");
}

TEST_CASE("structure errors: unknown keys, missing and duplicate fields") {
  expect_error("rules: [{name: a, min_iop: 1}]\n", "rules[0].min_iop: unknown key (did you mean \"min_iops\"?)");
  expect_error("mdoe: warn\nrules: [{name: a, min_iops: 1}]\n", "mdoe: unknown key (did you mean \"mode\"?)");
  expect_error("frobnicate: 1\nrules: [{name: a, min_iops: 1}]\n",
               "frobnicate: unknown key (known: apiVersion, kind, metadata, profile, mode, on_error, deadline, "
               "workload, early_stop, result_ttl, job_gather_window, rules, node, webhook)");
  expect_error("job_gather_window: 500ms\nrules: [{name: a, min_iops: 1}]\n",
               "job_gather_window: must be within [1s, 10m], got \"500ms\"");
  expect_error("job_gather_window: 11m\nrules: [{name: a, min_iops: 1}]\n",
               "job_gather_window: must be within [1s, 10m], got \"11m\"");
  expect_error("workload: {iodepht: 4}\nrules: [{name: a, min_iops: 1}]\n",
               "workload.iodepht: unknown key (did you mean \"iodepth\"?)");
  expect_error("rules: [{name: a, min_iops: 1, selector: {labels: {a: b}}}]\n",
               "rules[0].selector.labels: unknown key (did you mean \"pod_labels\"?)");
  expect_error("", "rules: missing; a policy needs at least one rule (or a profile to take them from)");
  expect_error("rules: []\n", "rules: empty; a policy needs at least one rule");
  expect_error("rules: {name: a}\n", "rules: expected a list of rules, got a map");
  expect_error("rules: [{min_iops: 1}]\n",
               "rules[0].name: missing; every rule needs a name (it appears in verdicts and Events)");
  expect_error("rules: [{name: 'has space', min_iops: 1}]\n",
               "rules[0].name: expected a name of letters, digits, '-', '_' or '.' (at most 63), got \"has space\"");
  expect_error("rules: [{name: a, min_iops: 1}, {name: b, min_iops: 2}, {name: a, min_iops: 3}]\n",
               "rules[2].name: \"a\" is already the name of rules[0]");
  expect_error(
      "rules: [{name: a}]\n",
      "rules[0]: no check; give at least one of demand, min_iops, min_iops_per_gpu, max_p99_latency, min_bandwidth, "
      "min_bandwidth_per_gpu, allowed_classes, forbidden_classes, min_samples_per_s, samples_per_s_per_gpu");
  expect_error("mode: warn\nmode: off\nrules: [{name: a, min_iops: 1}]\n", "mode: given twice");
  expect_error("rules: [a, b]\n", "rules[0]: expected a map, got \"a\"");

  auto missing_version = parse_policy("kind: StoragePolicy\nrules: [{name: a, min_iops: 1}]\n", "t");
  REQUIRE_FALSE(missing_version.ok());
  CHECK(missing_version.error().message == "apiVersion: missing (expected \"iogate.io/v1\")");
  auto wrong_version = parse_policy("apiVersion: v1\nkind: StoragePolicy\nrules: [{name: a, min_iops: 1}]\n", "t");
  REQUIRE_FALSE(wrong_version.ok());
  CHECK(wrong_version.error().message == "apiVersion: expected \"iogate.io/v1\", got \"v1\"");
  auto missing_kind = parse_policy("apiVersion: iogate.io/v1\nrules: [{name: a, min_iops: 1}]\n", "t");
  REQUIRE_FALSE(missing_kind.ok());
  CHECK(missing_kind.error().message == "kind: missing (expected \"StoragePolicy\")");
  auto wrong_kind = parse_policy("apiVersion: iogate.io/v1\nkind: ConfigMap\nrules: [{name: a, min_iops: 1}]\n", "t");
  REQUIRE_FALSE(wrong_kind.ok());
  CHECK(wrong_kind.error().message == "kind: expected \"StoragePolicy\", got \"ConfigMap\"");
}

TEST_CASE("not YAML at all, empty, several documents") {
  auto broken = parse_policy("apiVersion: iogate.io/v1\nkind: [StoragePolicy\n", "t");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().kind == ErrorKind::kUsage);
  CHECK(broken.error().message.find("not valid YAML or JSON") != std::string::npos);
  CHECK(broken.error().message.find("line ") == 0);

  auto empty = parse_policy("", "t");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message == "policy: empty; expected a map with apiVersion: iogate.io/v1 and kind: StoragePolicy");

  auto scalar = parse_policy("just words", "t");
  REQUIRE_FALSE(scalar.ok());
  CHECK(scalar.error().message == "policy: expected a map, got \"just words\"");

  auto two = parse_policy(std::string(kHeader) + "rules: [{name: a, min_iops: 1}]\n---\n" + kHeader, "t");
  REQUIRE_FALSE(two.ok());
  CHECK(two.error().message == "policy: expected one YAML document, found 2");
}

TEST_CASE("files: errors start with the path, an unreadable file is a configuration error") {
  iogate::testing::TempTree dir;
  std::string good = dir.root.string() + "/good.yaml";
  std::ofstream(good) << testing::example_policy_text();
  auto p = load_policy_file(good);
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->source == good);

  std::string bad = dir.root.string() + "/bad.yaml";
  std::ofstream(bad) << kHeader << "rules: [{name: a, min_iops: fast}]\n";
  auto b = load_policy_file(bad);
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().message == bad + ": rules[0].min_iops: expected a positive integer, got \"fast\"");

  auto missing = load_policy_file(dir.root.string() + "/nope.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::kUsage);
  CHECK(missing.error().message ==
        dir.root.string() + "/nope.yaml: cannot read the policy file: No such file or directory");

  // A directory (a ConfigMap volume's mount path) once read as an empty file: "policy: empty".
  auto directory = load_policy_file(dir.root.string());
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.error().kind == ErrorKind::kUsage);
  CHECK(directory.error().message == dir.root.string() + ": is a directory, not a policy file (a ConfigMap volume: " +
                                         "give its key's file, e.g. " + dir.root.string() + "/policy.yaml)");
}

TEST_CASE("resolve_policy: profile:NAME, a bare profile name, or a file") {
  auto a = resolve_policy("profile:streaming");
  REQUIRE(a.ok());
  CHECK(a->source == "profile:streaming");
  auto b = resolve_policy("streaming");
  REQUIRE(b.ok());
  CHECK(b->source == "profile:streaming");
  auto c = resolve_policy("profile:nope");
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().message.find("unknown profile \"nope\"") == 0);
  auto d = resolve_policy("fast-storage");
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().kind == ErrorKind::kUsage);
  CHECK(d.error().message.find("fast-storage: no such file, and unknown profile \"fast-storage\"") == 0);

  iogate::testing::TempTree dir;
  std::string file = dir.root.string() + "/p.yaml";
  std::ofstream(file) << testing::example_policy_text();
  auto e = resolve_policy(file);
  REQUIRE(e.ok());
  CHECK(e->source == file);
}

TEST_CASE("the node section: paths with names, intervals, busy threshold, taint effect, fast tier") {
  auto p = parse_policy(R"(apiVersion: iogate.io/v1
kind: StoragePolicy
profile: image-classification
node:
  paths: [/mnt/nvme, {path: /var/lib/kubelet, name: kubelet}]
  interval: 2h
  jitter: 20%
  busy_util: 30%
  busy_retry: 5m
  taint_effect: none
  fast_min_iops: 50000
)",
                        "p.yaml");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  REQUIRE(p->node.paths.size() == 2);
  CHECK(p->node.paths[0].path == "/mnt/nvme");
  CHECK(p->node.paths[0].name == "");
  CHECK(p->node.paths[1].name == "kubelet");
  CHECK(p->node.interval == std::chrono::hours(2));
  CHECK(p->node.jitter == doctest::Approx(0.2));
  CHECK(p->node.busy_util_percent == doctest::Approx(30));
  CHECK(p->node.busy_retry == std::chrono::minutes(5));
  CHECK(p->node.taint_effect == "");
  CHECK(*p->node.fast_min_iops == 50000);

  auto defaults = parse_policy("apiVersion: iogate.io/v1\nkind: StoragePolicy\nprofile: streaming\n", "d.yaml");
  REQUIRE(defaults.ok());
  CHECK(defaults->node.interval == std::chrono::hours(6));
  CHECK(defaults->node.taint_effect == "NoSchedule");
  CHECK(defaults->node.busy_util_percent == 50);
}

TEST_CASE("the node section's errors name the field") {
  auto err = [](const std::string& node) {
    auto p =
        parse_policy("apiVersion: iogate.io/v1\nkind: StoragePolicy\nprofile: streaming\nnode:\n" + node, "p.yaml");
    REQUIRE_FALSE(p.ok());
    return p.error().message;
  };
  CHECK(err("  paths: [data]\n").rfind("node.paths[0]: expected an absolute path", 0) == 0);
  CHECK(err("  paths: [{path: /a, name: Bad_Name}]\n").rfind("node.paths[0].name:", 0) == 0);
  CHECK(err("  paths: [/a, /a]\n").rfind("node.paths[1]: \"/a\" is already node.paths[0]", 0) == 0);
  CHECK(err("  taint_effect: NoWay\n").rfind("node.taint_effect:", 0) == 0);
  CHECK(err("  interval: 1s\n").rfind("node.interval: must be within [10s, 168h]", 0) == 0);
  CHECK(err("  jitter: 90%\n").rfind("node.jitter:", 0) == 0);
  CHECK(err("  fast_factor: fast\n").rfind("node.fast_factor:", 0) == 0);
  CHECK(err("  intervall: 1h\n").find("did you mean \"interval\"") != std::string::npos);
}

TEST_CASE("webhook.allow_opt_out: off unless the policy says so") {
  auto off = parse_policy("apiVersion: iogate.io/v1\nkind: StoragePolicy\nprofile: streaming\n", "p.yaml");
  REQUIRE(off.ok());
  CHECK_FALSE(off->webhook.allow_opt_out);
  auto on = parse_policy(
      "apiVersion: iogate.io/v1\nkind: StoragePolicy\nprofile: streaming\nwebhook: {allow_opt_out: true}\n", "p.yaml");
  REQUIRE_MESSAGE(on.ok(), on.error().message);
  CHECK(on->webhook.allow_opt_out);
  auto bad = parse_policy(
      "apiVersion: iogate.io/v1\nkind: StoragePolicy\nprofile: streaming\nwebhook: {allow_opt_out: maybe}\n", "p.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.rfind("webhook.allow_opt_out: expected true or false", 0) == 0);
}

TEST_CASE("a huge field value is cut in the error, which still names the field") {
  const std::string big(1'000'000, '7');  // as large as a policy may be (1 MiB in all)
  struct Row {
    std::string body;
    std::string field;
  };
  for (const Row& row :
       {Row{"deadline: " + big + "\nrules: [{name: r, min_iops: 1}]\n", "deadline: "},
        Row{"rules: [{name: r, allowed_classes: [nvme, x" + big + "]}]\n", "rules[0].allowed_classes[1]: "},
        Row{"rules:\n  - name: r\n    min_bandwidth: " + big + "x\n", "rules[0].min_bandwidth: "},
        // A key: YAML's implicit keys stop at 1024 characters, an explicit one (?) does not.
        Row{"? x" + big + "\n: 1\n", "[a value of 1,000,001 bytes starting \"x777"},
        Row{"mode: " + big + "\n", "mode: "},
        // bench/'s own message, once whole (fuzz.policy's second finding).
        Row{"workload: {rw: " + big + "}\nrules: [{name: r, min_iops: 1}]\n", "workload.rw: unknown workload "}}) {
    auto p = parse_policy(kHeader + row.body, "huge.yaml");
    REQUIRE_FALSE(p.ok());
    CAPTURE(p.error().message.substr(0, 300));
    CHECK(p.error().message.size() < 400);
    CHECK(p.error().message.find(row.field) != std::string::npos);
    CHECK(p.error().message.find("bytes starting \"") != std::string::npos);
  }
}

TEST_CASE("a scalar, a list or nothing where a map belongs is an error naming the field, in every section") {
  const std::string rules = "rules: [{name: a, min_iops: 1}]\n";
  struct Row {
    std::string body, message;
  };
  for (const Row& row : {
           // `workload: 5` once threw yaml-cpp's BadSubscript: every mode aborted (exit 134).
           Row{"workload: 5\n" + rules, "workload: expected a map, got \"5\""},
           Row{"workload: [randread]\n" + rules, "workload: expected a map, got a list"},
           Row{"workload:\n" + rules, "workload: expected a map, got nothing"},
           Row{"workload: dataset\n" + rules, "workload: expected a map, got \"dataset\""},
           Row{"early_stop: true\n" + rules, "early_stop: expected a map, got \"true\""},
           Row{"early_stop: [1]\n" + rules, "early_stop: expected a map, got a list"},
           Row{"node: /data\n" + rules, "node: expected a map, got \"/data\""},
           Row{"node: [/data]\n" + rules, "node: expected a map, got a list"},
           Row{"webhook: true\n" + rules, "webhook: expected a map, got \"true\""},
           Row{"metadata: name\n" + rules, "metadata: expected a map, got \"name\""},
           Row{"metadata: {labels: team}\n" + rules,
               "metadata.labels: expected a non-empty map of label: value, got \"team\""},
           Row{"metadata: {annotations: [a]}\n" + rules,
               "metadata.annotations: expected a non-empty map of annotation: value, got a list"},
           Row{"rules: [{name: a, min_iops: 1, selector: nvme}]\n", "rules[0].selector: expected a map, got \"nvme\""},
           Row{"rules: [{name: a, min_iops: 1, selector: [nvme]}]\n", "rules[0].selector: expected a map, got a list"},
           Row{"rules: [{name: a, min_iops: 1, selector: {pod_labels: team}}]\n",
               "rules[0].selector.pod_labels: expected a non-empty map of label: value, got \"team\""},
           Row{"rules: [[name, a]]\n", "rules[0]: expected a map, got a list"},
           Row{"rules: [~]\n", "rules[0]: expected a map, got nothing"},
           Row{"rules: a\n", "rules: expected a list of rules, got \"a\""},
           Row{"node: {paths: [[/a]]}\n" + rules,
               "node.paths[0]: expected an absolute path, or {path, name}, got a list"},
           Row{"node: {paths: /a}\n" + rules,
               "node.paths: expected a non-empty list of paths or {path, name}, got \"/a\""},
       }) {
    CAPTURE(row.body);
    expect_error(row.body, row.message);
  }
  auto list = parse_policy("- apiVersion: iogate.io/v1\n- kind: StoragePolicy\n", "t");
  REQUIRE_FALSE(list.ok());
  CHECK(list.error().message == "policy: expected a map, got a list");
}

TEST_CASE("label keys and values, in selectors and metadata, as Kubernetes checks them") {
  auto good = parse_policy(std::string(kHeader) +
                               "metadata:\n  labels: {app.kubernetes.io/part-of: iogate, tier: ''}\n"
                               "  annotations: {Example.com/Owner: 'the storage team, room 4'}\n"
                               "rules:\n  - name: a\n    min_iops: 1\n"
                               "    selector: {pod_labels: {example.com/team: vision-2, empty: ''}}\n",
                           "t.yaml");
  REQUIRE_MESSAGE(good.ok(), good.error().message);
  CHECK(good->rules[0].selector.pod_labels.at("example.com/team") == "vision-2");
  CHECK(good->rules[0].selector.pod_labels.at("empty") == "");

  const std::string value(64, 'v');
  expect_error("rules: [{name: a, min_iops: 1, selector: {pod_labels: {team: " + value + "}}}]\n",
               "rules[0].selector.pod_labels.team: expected a label value (empty, or at most 63 letters, digits, '-', "
               "'_' or '.', starting and ending with a letter or digit), got \"" +
                   value + "\"");
  expect_error("rules: [{name: a, min_iops: 1, selector: {pod_labels: {team: -vision}}}]\n",
               "rules[0].selector.pod_labels.team: expected a label value (empty, or at most 63 letters, digits, '-', "
               "'_' or '.', starting and ending with a letter or digit), got \"-vision\"");
  expect_error("rules: [{name: a, min_iops: 1, selector: {pod_labels: {'my team': a}}}]\n",
               "rules[0].selector.pod_labels[\"my team\"]: not a label key: the name must be letters, digits, '-', "
               "'_' or '.', starting and ending with a letter or digit");
  expect_error("rules: [{name: a, min_iops: 1, selector: {pod_labels: {Example.com/team: a}}}]\n",
               "rules[0].selector.pod_labels[\"Example.com/team\"]: not a label key: the prefix before '/' must be a "
               "lower-case DNS subdomain of at most 253 characters (like example.com)");
  expect_error("metadata: {labels: {team: " + value + "}}\nrules: [{name: a, min_iops: 1}]\n",
               "metadata.labels.team: expected a label value (empty, or at most 63 letters, digits, '-', '_' or '.', "
               "starting and ending with a letter or digit), got \"" +
                   value + "\"");
  expect_error("metadata: {annotations: {'a/b/c': x}}\nrules: [{name: a, min_iops: 1}]\n",
               "metadata.annotations[\"a/b/c\"]: not an annotation key: at most one '/', between a DNS-subdomain "
               "prefix and the name");
  // Annotation values may be long, but not more than 256 KiB in all.
  const std::string note(200'000, 'n');
  CHECK(parse_policy(
            std::string(kHeader) + "metadata: {annotations: {a: " + note + "}}\nrules: [{name: a, min_iops: 1}]\n", "t")
            .ok());
  expect_error("metadata: {annotations: {a: " + note + ", b: " + note + "}}\nrules: [{name: a, min_iops: 1}]\n",
               "metadata.annotations: more than 256 KiB in all, the most an object may have");

  // One long label value named by many aliases (the issue's 611 KB policy took 3.9 GB and passed):
  // refused at the first value.
  std::string bomb = std::string(kHeader) + "rules:\n  - name: a\n    min_iops: 1\n    selector:\n      pod_labels:\n" +
                     "        k0: &v " + std::string(10'000, 'x') + "\n";
  for (int i = 1; i < 300; ++i) bomb += "        k" + std::to_string(i) + ": *v\n";
  auto refused = parse_policy(bomb, "t");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.rfind("rules[0].selector.pod_labels.k0: expected a label value", 0) == 0);
}

TEST_CASE("aliases: a shared part is read where it is named; past the bound, refused") {
  auto shared = parse_policy(std::string(kHeader) +
                                 "rules:\n  - {name: a, min_iops: 1, selector: &s {paths: [/data], device_classes: "
                                 "[nvme]}}\n  - {name: b, max_p99_latency: 5ms, selector: *s}\n",
                             "t.yaml");
  REQUIRE_MESSAGE(shared.ok(), shared.error().message);
  CHECK(shared->rules[1].selector.paths == std::vector<std::string>{"/data"});

  // Paths have no length limit of their own: 1,000 aliases of a 100 kB path would be 100 MB.
  std::string bomb = std::string(kHeader) + "rules:\n  - name: a\n    min_iops: 1\n    selector:\n      paths:\n" +
                     "        - &p /" + std::string(100'000, 'd') + "\n";
  for (int i = 0; i < 1000; ++i) bomb += "        - *p\n";
  auto refused = parse_policy(bomb, "t");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("aliases expand it past 4 MiB") != std::string::npos);
}

TEST_CASE("a policy larger than a ConfigMap's 1 MiB is refused before it is parsed") {
  const std::string valid = std::string(kHeader) + "rules: [{name: a, min_iops: 1}]\n";
  std::string padded = valid + "#" + std::string(kPolicyMaxBytes - valid.size() - 2, ' ') + "\n";
  REQUIRE(padded.size() == kPolicyMaxBytes);
  auto at_limit = parse_policy(padded, "t");
  CHECK_MESSAGE(at_limit.ok(), at_limit.error().message);
  auto over = parse_policy(padded + " ", "t");
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().kind == ErrorKind::kUsage);
  CHECK(over.error().message == "policy: larger than 1 MiB, the most a ConfigMap holds");

  iogate::testing::TempTree dir;
  const std::string file = dir.root.string() + "/big.yaml";
  std::ofstream(file) << padded << std::string(10'000'000, '#');
  auto big = load_policy_file(file);
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().kind == ErrorKind::kUsage);
  CHECK(big.error().message == file + ": policy: larger than 1 MiB, the most a ConfigMap holds");

  // /dev/zero once read until bad_alloc.
  auto zero = load_policy_file("/dev/zero");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.error().message == "/dev/zero: policy: larger than 1 MiB, the most a ConfigMap holds");
}

TEST_CASE("a FIFO is read like a file: without a writer it is empty, an endless one is cut at 1 MiB") {
  iogate::testing::TempTree dir;
  const std::string fifo = dir.root.string() + "/policy.yaml";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // No writer: opening does not wait for one.
  auto empty = load_policy_file(fifo);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message.rfind(fifo + ": policy: empty", 0) == 0);

  // A writer that never stops (yes > fifo): refused after 1 MiB + 1 byte; the writer then gets EPIPE.
  std::thread writer([&] {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);  // EPIPE instead of the signal, in this thread
    int fd = open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string chunk(65536, '#');
    while (write(fd, chunk.data(), chunk.size()) > 0) {
    }
    close(fd);
  });
  // The writer's open waits for a reader; this one lets it in, and its first byte says it is there
  // (before that, a reader would see no writer and an empty file).
  int keep = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(keep >= 0);
  char byte;
  while (read(keep, &byte, 1) <= 0) std::this_thread::yield();
  auto endless = load_policy_file(fifo);
  close(keep);
  writer.join();
  REQUIRE_FALSE(endless.ok());
  CHECK(endless.error().message == fifo + ": policy: larger than 1 MiB, the most a ConfigMap holds");
}
