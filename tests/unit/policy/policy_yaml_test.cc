#include <doctest/doctest.h>

#include <string>

#include "policy/policy_yaml.h"

using namespace iogate;

namespace {

std::string error_of(const std::string& text) {
  auto doc = load_policy_yaml(text);
  REQUIRE_FALSE_MESSAGE(doc.ok(), text.substr(0, 200));
  CHECK(doc.error().kind == ErrorKind::kUsage);
  CHECK(doc.error().message.find('\n') == std::string::npos);
  CHECK(doc.error().message.size() < 300);
  return doc.error().message;
}

// "k0: &a [x, x, ...]" then each level a list of `fanout` aliases of the level below: the
// "billion laughs", fanout^levels copies of the first list in a text of a few hundred bytes.
std::string laughs(int levels, int fanout) {
  std::string text = "k0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= levels; ++i) {
    text.append("k").append(std::to_string(i)).append(": &a").append(std::to_string(i)).append(" [");
    for (int j = 0; j < fanout; ++j) text += (j ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  return text;
}

}  // namespace

TEST_CASE("a document within the bounds loads, aliases and all") {
  auto doc = load_policy_yaml("a: &x {b: 1}\nc: *x\nd: [*x, *x]\n");
  REQUIRE_MESSAGE(doc.ok(), doc.error().message);
  CHECK((*doc)["c"]["b"].Scalar() == "1");
  CHECK((*doc)["d"][1]["b"].Scalar() == "1");

  auto empty = load_policy_yaml("");
  REQUIRE(empty.ok());
  CHECK_FALSE(static_cast<bool>(*empty && !empty->IsNull()));
  auto comment = load_policy_yaml("# nothing here\n");
  REQUIRE(comment.ok());

  // The billion laughs just under the bound: 10 lists of 10 aliases of 10 lists... is fine at 3
  // levels (10,000 values).
  CHECK(load_policy_yaml(laughs(3, 10)).ok());
}

TEST_CASE("aliases that expand past the bound are refused before a node is built") {
  // 30 levels of 10: 10^31 values; yaml-cpp itself loads it in microseconds (its aliases share
  // nodes), a walk of it never ends. Level 5 holds 10 aliases of 411,111 bytes each: the 10th
  // (column 55) passes 4 MiB.
  CHECK(error_of(laughs(30, 10)) ==
        "policy: line 6, column 55: aliases expand it past 4 MiB (each *alias counts as a copy of what it names)");
  // One long value named many times: 100 kB × 100.
  std::string text = "v: &v " + std::string(100'000, 'x') + "\nl: [";
  for (int i = 0; i < 100; ++i) text += "*v, ";
  text += "]\n";
  CHECK(error_of(text).find("aliases expand it past 4 MiB") != std::string::npos);
  // Within the bound, the same shape loads: 100 kB × 30 is 3 MB.
  std::string fine = "v: &v " + std::string(100'000, 'x') + "\nl: [";
  for (int i = 0; i < 30; ++i) fine += "*v, ";
  CHECK(load_policy_yaml(fine + "]\n").ok());
}

TEST_CASE("an alias inside the node it names is a cycle, refused") {
  CHECK(error_of("a: &a [1, *a]\n") == "policy: line 1, column 11: an alias inside the node it names (a cycle)");
  CHECK(error_of("a: &m {b: {c: *m}}\n").find("a cycle") != std::string::npos);
}

TEST_CASE("too many nodes, too many indicators, too deep: one line each") {
  std::string many = "[";
  for (size_t i = 0; i <= kPolicyMaxNodes; ++i) many += "0,";
  many += "]";
  CHECK(error_of(many).find("more than 50,000 values, lists and maps; a policy needs far fewer") != std::string::npos);

  // yaml-cpp's scanner keeps a flow collection's tokens until it closes: counted before it runs.
  std::string commas = std::string("[").append(kPolicyMaxIndicators, ',').append("]");
  CHECK(error_of(commas) ==
        "policy: more than 100,000 of YAML's indicator characters (- ? : , [ ] { } # & * ! | > ' \" % @ `); a "
        "policy needs far fewer");

  // yaml-cpp's own message for this was "bad file".
  std::string deep = "a: " + std::string(1000, '[') + std::string(1000, ']');
  std::string message = error_of(deep);
  CHECK(message.find("lists and maps nested 500 deep, deeper than YAML's parser goes") != std::string::npos);
  CHECK(message.rfind("line 1, column ", 0) == 0);
  CHECK(message.find("bad file") == std::string::npos);
}

TEST_CASE("not YAML, several documents") {
  CHECK(error_of("a: [b\n").find("not valid YAML or JSON") != std::string::npos);
  CHECK(error_of("a: 1\n---\nb: 2\n---\nc: 3\n") == "policy: expected one YAML document, found 3");
  CHECK(error_of("a: *nowhere\n").find("not valid YAML or JSON") != std::string::npos);
  // yaml-cpp's message may hold the user's text: the escaped character, or after a NUL a newline
  // (the fuzz target's first finding: a two-line error).
  CHECK(error_of("a: \"x\\\x01\"\n") == "line 1, column 8: not valid YAML or JSON: unknown escape character: \\x01");
  CHECK(error_of(std::string("a: b\0\n: c\n", 10)) ==
        "line 2, column 1: not valid YAML or JSON: unknown escape character: \\x0a");
}
