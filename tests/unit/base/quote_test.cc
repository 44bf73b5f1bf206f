#include <doctest/doctest.h>

#include <string>

#include "base/quote.h"
#include "base/units.h"

using namespace iogate;

TEST_CASE("quote_value: short values whole, in quotes") {
  CHECK(quote_value("4q") == "\"4q\"");
  CHECK(quote_value("") == "\"\"");
  CHECK(quote_value(std::string(kQuotedValueMax, 'a')) == "\"" + std::string(kQuotedValueMax, 'a') + "\"");
}

TEST_CASE("quote_value: a long value cut, with its size") {
  const std::string big(10'000'000, 'a');
  std::string q = quote_value(big);
  CHECK(q == "a value of 10,000,000 bytes starting \"" + std::string(kQuotedValueMax, 'a') + "…\"");
  CHECK(q.size() < 200);
  CHECK(quote_value(std::string(kQuotedValueMax + 1, 'b')).find("a value of 65 bytes") == 0);
}

TEST_CASE("quote_value: one line, never half a character") {
  CHECK(quote_value("a\nb\tc\x7f") == "\"a\\x0ab\\x09c\\x7f\"");
  // "é" is two bytes; 63 ASCII bytes then "é" puts the 64-byte cut inside it: the cut moves back.
  std::string text = std::string(kQuotedValueMax - 1, 'x') + "é" + std::string(100, 'y');
  CHECK(quote_value(text) == "a value of 165 bytes starting \"" + std::string(kQuotedValueMax - 1, 'x') + "…\"");
}

TEST_CASE("an error of a units parser quotes a 10 MB value cut, naming the field") {
  const std::string big(10'000'000, '9');
  for (const Error& e : {parse_size(big + "q", "--bs").error(), parse_duration("x" + big, "deadline").error(),
                         parse_integer(big + "x", "--iodepth", 1, 4096).error(), parse_bool(big, "--direct").error()}) {
    CHECK(e.message.size() < 300);
    CHECK(e.message.find("10,000,00") != std::string::npos);
  }
  CHECK(parse_duration("x" + big, "deadline").error().message.rfind("deadline: ", 0) == 0);
}

TEST_CASE("parse_bool: fio's 1/0 and kubectl's true/false, nothing else") {
  CHECK(*parse_bool("1", "--direct"));
  CHECK(*parse_bool("true", "--direct"));
  CHECK_FALSE(*parse_bool("0", "--direct"));
  CHECK_FALSE(*parse_bool("false", "--direct"));
  for (const char* bad : {"yes", "no", "on", "off", "", "2", "True", "maybe"}) {
    auto r = parse_bool(bad, "--direct");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::kUsage);
    CHECK(r.error().message == std::string("--direct: expected 1 or 0 (true or false), got \"") + bad + "\"");
  }
}

TEST_CASE("log_safe: control characters escaped, cut on a character boundary") {
  CHECK(log_safe("pod\nname\x01") == "pod\\x0aname\\x01");
  CHECK(log_safe("\xff") == "\\xff");
  CHECK(log_safe("\xc3\xa9t\xc3\xa9", 3) == "\xc3\xa9t...");
  CHECK(log_safe("\xc3\xa9t\xc3\xa9", 4) == "\xc3\xa9t...");
  CHECK(log_safe("abc", 3) == "abc");
}

TEST_CASE("edit_distance: what a did-you-mean suggestion is ranked by") {
  CHECK(edit_distance("min_iop", "min_iops") == 1);
  CHECK(edit_distance("mdoe", "mode") == 2);
  CHECK(edit_distance("", "abc") == 3);
}
