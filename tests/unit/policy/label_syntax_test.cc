#include <doctest/doctest.h>

#include <string>

#include "policy/label_syntax.h"

using namespace iogate;

namespace {

std::string key_error(std::string_view key) {
  Status s = check_label_key(key, "k");
  return s.ok() ? "" : s.error().message;
}

bool value_ok(std::string_view value) { return check_label_value(value, "v").ok(); }

}  // namespace

TEST_CASE("label keys: an optional DNS-subdomain prefix, '/', a name of at most 63") {
  for (const char* good : {"team", "app.kubernetes.io/name", "example.com/Team_1", "a", "A-b.c_D", "x/y",
                           "kubernetes.io/hostname", "1-2.3"}) {
    CAPTURE(good);
    CHECK(key_error(good) == "");
  }
  CHECK(key_error(std::string(63, 'n')) == "");
  CHECK(key_error(std::string(253, 'p') + "/" + std::string(63, 'n')) == "");

  CHECK(key_error(std::string(64, 'n')) == "k: not a label key: the name is longer than 63 characters");
  CHECK(key_error("-team") ==
        "k: not a label key: the name must be letters, digits, '-', '_' or '.', starting and ending with a letter or "
        "digit");
  CHECK(key_error("team.") != "");
  CHECK(key_error("has space") != "");
  CHECK(key_error("example.com/") == "k: not a label key: the name is empty");
  CHECK(key_error("/name") ==
        "k: not a label key: the prefix before '/' must be a lower-case DNS subdomain of at most 253 characters (like "
        "example.com)");
  CHECK(key_error("Example.com/name") != "");            // the prefix is lower-case
  CHECK(key_error("example..com/name") != "");           // empty DNS label
  CHECK(key_error("-example.com/name") != "");           // a DNS label starts alphanumeric
  CHECK(key_error(std::string(254, 'p') + "/n") != "");  // prefix past 253
  CHECK(key_error("a/b/c") == "k: not a label key: at most one '/', between a DNS-subdomain prefix and the name");
}

TEST_CASE("label values: empty, or at most 63 alphanumeric at both ends with -_. inside") {
  for (const char* good : {"", "vision", "a", "v1.2_3-x", "0"}) {
    CAPTURE(good);
    CHECK(value_ok(good));
  }
  CHECK(value_ok(std::string(63, 'v')));
  CHECK_FALSE(value_ok(std::string(64, 'v')));
  for (const char* bad : {"-a", "a-", ".a", "a_", "has space", "a/b", "ä", "a\nb"}) {
    CAPTURE(bad);
    CHECK_FALSE(value_ok(bad));
  }
  // The error quotes a long value cut, so the line stays short.
  Status s = check_label_value(std::string(100'000, 'x'), "rules[0].selector.pod_labels.team");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().kind == ErrorKind::kUsage);
  CHECK(s.error().message.rfind("rules[0].selector.pod_labels.team: expected a label value (empty, or at most 63", 0) ==
        0);
  CHECK(s.error().message.find("a value of 100,000 bytes starting") != std::string::npos);
  CHECK(s.error().message.size() < 400);
}

TEST_CASE("annotation keys are checked lower-cased, as the API server does") {
  CHECK(check_annotation_key("Example.COM/Note", "a").ok());
  CHECK_FALSE(check_label_key("Example.COM/Note", "a").ok());
  Status s = check_annotation_key("a b", "metadata.annotations[\"a b\"]");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.rfind("metadata.annotations[\"a b\"]: not an annotation key: ", 0) == 0);
}
