// libFuzzer target for policy parsing (agent/policy/policy.h: parse_policy), what every mode
// runs on the --policy file before anything else.
//
// The input is the policy's text. A broken contract aborts with __builtin_trap(), which libFuzzer
// reports as a crash and saves the input:
//   - the parser returns (no exception escapes: yaml-cpp's BadSubscript once aborted every mode on
//     `workload: 5`), within libFuzzer's time and memory limits (aliases once expanded to GBs);
//   - a refusal is a usage error (exit 2), one line under 1 KiB, and never the parser's last line
//     of defence (a YAML exception caught around the reader: a reader that looked inside a node of
//     the wrong kind);
//   - an accepted policy keeps the promises evaluate.h relies on: rules, with unique names, label
//     keys and values in Kubernetes' syntax; and it renders, as `policy check` shows it.
//
// Built and run by tests/fuzz/run_fuzz.sh policy (ctest: fuzz.policy), with clang++ and
// -fsanitize=fuzzer,address,undefined. Seeds: tests/fuzz/corpus/policy (the crash cases of issue
// 29 among them).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "policy/label_syntax.h"
#include "policy/policy.h"
#include "policy/policy_render.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto p = iogate::parse_policy(text, "fuzz.yaml");
  if (!p.ok()) {
    const std::string& m = p.error().message;
    check(p.error().kind == iogate::ErrorKind::kUsage);
    check(!m.empty() && m.size() < 1024 && m.find('\n') == std::string::npos);
    // "policy: line L, column C: ..." holds no text of the input (a quoted value is not at the
    // start), so the phrase after it is the catch's, not the input's.
    check(m.rfind("policy: line ", 0) != 0 || m.find("a YAML shape the reader does not expect") == std::string::npos);
    return 0;
  }
  check(!p->rules.empty());
  std::set<std::string> names;
  for (const iogate::Rule& r : p->rules) {
    check(names.insert(r.name).second);
    for (const auto& [key, value] : r.selector.pod_labels) {
      check(iogate::check_label_key(key, "k").ok());
      check(iogate::check_label_value(value, "v").ok());
    }
  }
  check(p->deadline >= p->workload.runtime);
  for (std::optional<int> gpus : {std::optional<int>(), std::optional<int>(0), std::optional<int>(4096)}) {
    check(!iogate::render_policy_human(*p, gpus).empty());
    check(iogate::policy_to_json(*p, gpus).is_object());
  }
  return 0;
}
