// json_footprint against what nlohmann::json::parse allocates (glibc's mallinfo2, this process's
// heap, and the peak counted by the operator new and delete defined here): never less than
// parsing and freeing the tree take, for every shape of JSON, and close to it where the tree is
// most of the cost (many small values).
#include <doctest/doctest.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "heap_peak.h"
#include "webhook/json_footprint.h"

namespace {
std::atomic<size_t> in_use{0}, peak{0};
}  // namespace

// For the whole test binary (heap_peak.h).
void* operator new(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  size_t now = in_use.fetch_add(malloc_usable_size(p)) + malloc_usable_size(p);
  for (size_t seen = peak.load(); now > seen && !peak.compare_exchange_weak(seen, now);) {
  }
  return p;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  in_use.fetch_sub(malloc_usable_size(p));
  std::free(p);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }

namespace iogate::test {
size_t heap_in_use() { return in_use.load(); }
size_t heap_peak() { return peak.load(); }
size_t reset_heap_peak() {
  size_t now = in_use.load();
  peak.store(now);
  return now;
}
}  // namespace iogate::test

using namespace iogate;

namespace {

// The most the heap holds while `text` is parsed and its tree freed.
size_t parse_and_free_peak(const std::string& text) {
  size_t before = test::reset_heap_peak();
  { nlohmann::json tree = nlohmann::json::parse(text); }
  return test::heap_peak() - before;
}

// The heap bytes the tree of `text` holds once parsed.
size_t tree_bytes(const std::string& text) {
  size_t before = mallinfo2().uordblks;
  nlohmann::json tree = nlohmann::json::parse(text);
  return mallinfo2().uordblks - before;
}

// `count` times `item`, separated by `separator`, between `open` and `close`.
std::string list(const std::string& item, size_t count, const char* open = "[", const char* close = "]",
                 const char* separator = ",") {
  std::string s = open;
  for (size_t i = 0; i < count; ++i) {
    if (i) s += separator;
    s += item;
  }
  s += close;
  return s;
}

std::string env_list(size_t count) {
  std::string s = "{\"spec\":{\"containers\":[{\"name\":\"train\",\"env\":[";
  for (size_t i = 0; i < count; ++i) {
    if (i) s += ',';
    s += "{\"name\":\"E";
    s += std::to_string(100000 + i);
    s += "\",\"value\":\"1\"}";
  }
  return s + "]}]}}";
}

}  // namespace

TEST_CASE("json footprint: at least what the parsed tree holds, whatever the shape") {
  struct Shape {
    const char* name;
    std::string text;
  };
  std::string long_keys = "{";
  for (int i = 0; i < 2000; ++i) {
    if (i) long_keys += ',';
    long_keys += '"';
    long_keys += std::string(40, 'k');
    long_keys += std::to_string(i);
    long_keys += "\":\"v\"";
  }
  long_keys += "}";
  std::string deep = std::string(100, '[') + std::string(100, ']');
  std::string many_labels = "{";
  for (int i = 0; i < 100000; ++i) many_labels += (i ? ",\"l" : "\"l") + std::to_string(100000 + i) + "\":\"\"";
  many_labels += "}";
  std::string nested_lists = list(list(list("1", 50), 50), 50);
  for (const Shape& s : {
           Shape{"environment variables", env_list(20000)},
           Shape{"one long string", list(std::string(1 << 20, 'x'), 1, "{\"a\":{\"b\":\"", "\"}}")},
           Shape{"escapes", list("\\u00e9\\n", 20000, "[\"", "\"]", "")},
           Shape{"small numbers", list("1", 100000)},
           Shape{"empty objects", list("{}", 100000)},
           Shape{"empty arrays", list("[]", 100000)},
           Shape{"short strings", list("\"a\"", 100000)},
           Shape{"strings just over the short-string length", list("\"ssssssssssssssss\"", 50000)},
           Shape{"members with long keys", long_keys},
           Shape{"literals and spaces", list("true , null , false , -1.5e3", 20000, "[ ", " ]", " , ")},
           Shape{"nested 100 deep", deep},
           Shape{"a number alone", "12345"},
           Shape{"100,000 members", many_labels},
           Shape{"lists of lists", nested_lists},
       }) {
    CAPTURE(s.name);
    size_t tree = tree_bytes(s.text);
    size_t bound = json_footprint(s.text);
    CHECK(bound >= tree);
    CHECK(bound >= parse_and_free_peak(s.text));
  }
}

TEST_CASE("json footprint: close to what parsing and freeing take where many small values make it") {
  std::string env = env_list(20000);  // the densest a real pod gets
  size_t took = parse_and_free_peak(env);
  CHECK(json_footprint(env) <= took + took / 4);
  // An array's elements are counted at 48 bytes (16 each, twice as many as it holds at most, and
  // the old buffer beside the new while it grows), and 48 more on the destructor's stack; parsed,
  // it holds 16 to 32 bytes an element, and the stack takes 16 (the root's children are reserved).
  for (const std::string& array : {list("1", 100000), list("{}", 100000)}) {
    CHECK(json_footprint(array) <= 3 * parse_and_free_peak(array));
  }
}

TEST_CASE("json footprint: invalid or cut text gives a number, not a fault") {
  for (std::string text : {"", "{", "[", "\"", "\"abc", "{\"a\":", "]]]]}}}", "\\", "[1,2", "nul", "{\"k\" :"}) {
    CAPTURE(text);
    CHECK(json_footprint(text) < 1024);
  }
}
