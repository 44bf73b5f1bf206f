#include "policy/policy_yaml.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/anchor.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "base/quote.h"
#include "base/units.h"

namespace iogate {
namespace {

// Thrown by BoundCounter to stop the parser at the first bound crossed; caught in load_policy_yaml.
struct OutOfBounds {
  std::string message;
};

std::string at(const YAML::Mark& m) { return fmt::format("line {}, column {}", m.line + 1, m.column + 1); }

// Counts what the document would be with its aliases written out. An anchored node's size is
// known when it closes (the running total then, less the total when it opened); an alias adds it.
class BoundCounter : public YAML::EventHandler {
 public:
  size_t documents() const { return documents_; }

  void OnDocumentStart(const YAML::Mark&) override {
    ++documents_;
    anchors_.clear();  // yaml-cpp numbers anchors per document
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, 0); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    leaf(mark, anchor, value.size());
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    // yaml-cpp registers an anchor when its node opens: an alias to one still open is inside it,
    // a node that contains itself (yaml-cpp builds the cycle; expanded, it never ends).
    if (it == anchors_.end()) {
      throw OutOfBounds{fmt::format("policy: {}: an alias inside the node it names (a cycle)", at(mark))};
    }
    add(mark, it->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    size_t expanded_at_open;
  };

  void add(const YAML::Mark& mark, size_t bytes) {
    if (++nodes_ > kPolicyMaxNodes) {
      throw OutOfBounds{fmt::format("policy: {}: more than {} values, lists and maps; a policy needs far fewer",
                                    at(mark), format_thousands(kPolicyMaxNodes))};
    }
    expanded_ += bytes;
    if (expanded_ > kPolicyMaxExpandedBytes) {
      throw OutOfBounds{
          fmt::format("policy: {}: aliases expand it past {} MiB (each *alias counts as a copy of what "
                      "it names)",
                      at(mark), kPolicyMaxExpandedBytes >> 20)};
    }
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, size_t bytes) {
    add(mark, 1 + bytes);
    if (anchor != YAML::NullAnchor) anchors_[anchor] = 1 + bytes;
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    open_.push_back({anchor, expanded_});
    add(mark, 1);
  }
  void close() {
    if (open_.empty()) return;
    const Open o = open_.back();
    open_.pop_back();
    if (o.anchor != YAML::NullAnchor) anchors_[o.anchor] = expanded_ - o.expanded_at_open;
  }

  size_t documents_ = 0;
  size_t nodes_ = 0;
  size_t expanded_ = 0;
  std::vector<Open> open_;
  std::unordered_map<YAML::anchor_t, size_t> anchors_;  // closed anchored nodes → their expanded size
};

}  // namespace

Result<YAML::Node> load_policy_yaml(std::string_view text) {
  constexpr std::string_view kIndicators = "-?:,[]{}#&*!|>'\"%@`";  // the YAML spec's c-indicator
  const size_t indicators =
      std::count_if(text.begin(), text.end(), [&](char c) { return kIndicators.find(c) != std::string_view::npos; });
  if (indicators > kPolicyMaxIndicators) {
    std::string listed;
    for (char c : kIndicators) {
      if (!listed.empty()) listed += ' ';
      listed += c;
    }
    return usage_error(fmt::format("policy: more than {} of YAML's indicator characters ({}); a policy needs far fewer",
                                   format_thousands(kPolicyMaxIndicators), listed));
  }
  const std::string copy(text);
  try {
    BoundCounter counter;
    std::istringstream in(copy);
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter)) {
    }
    if (counter.documents() > 1) {
      return usage_error(fmt::format("policy: expected one YAML document, found {}", counter.documents()));
    }
    if (counter.documents() == 0) return YAML::Node();
    return YAML::Load(copy);
  } catch (const OutOfBounds& e) {
    return usage_error(e.message);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this is "bad file".
    return usage_error(
        fmt::format("{}: lists and maps nested {} deep, deeper than YAML's parser goes; a policy needs a "
                    "handful of levels",
                    at(e.mark), e.depth()));
  } catch (const YAML::Exception& e) {
    // yaml-cpp's message carries "yaml-cpp: error at line L, column C: what"; keep the position.
    // Some hold the user's text ("unknown escape character: " and the character, a newline even).
    return usage_error(fmt::format("{}: not valid YAML or JSON: {}", at(e.mark), log_safe(e.msg)));
  }
}

}  // namespace iogate
