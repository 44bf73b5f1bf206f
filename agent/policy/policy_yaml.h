// A policy's text → its one YAML document, within bounds: no input crashes a mode or makes it
// grow. yaml-cpp builds some 480 bytes of nodes for each value, list and map (a 1 MiB flow map of
// one-letter keys took 500 MB), and an alias (*name) stands for all of what it names at the cost
// of a few bytes of text (a 611 KB file of aliased label values took 3.9 GB to read). Both are
// counted on the parser's events before yaml-cpp builds a node, so what is refused costs no more
// than scanning the text once. A document that loads may still be anything: a scalar where a map
// belongs is for the schema reader (policy_parse.cc) to refuse.
#pragma once

#include <cstddef>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "base/result.h"

namespace iogate {

// YAML's indicator characters (- ? : , [ ] { } # & * ! | > ' " % @ `), counted in the whole text
// before the parser sees it. yaml-cpp's scanner keeps every token of a flow collection ([...],
// {...}, all of a JSON policy) until the collection ends, some 90 bytes each: a 1 MiB `[0,0,...]`
// took 146 MB before the first event. Nearly every token needs an indicator, so this bounds them; a
// policy's structure needs a few per value, and prose with punctuation stays far below.
inline constexpr size_t kPolicyMaxIndicators = 100'000;
// Values, lists, maps and aliases in one policy: a policy needs some hundreds (the manual's example
// has 40), and this many cost yaml-cpp about 25 MB, which the webhook's 128Mi limit can hold.
inline constexpr size_t kPolicyMaxNodes = 50'000;
// The text's size with every alias written out as what it names, a byte a node besides the values'
// bytes: 4 times the largest file, so that only aliases reach it.
inline constexpr size_t kPolicyMaxExpandedBytes = size_t{4} << 20;

// The document, a null node for a text without one. Errors are usage errors, one line: not YAML
// (with line and column), too many indicators, nested too deep, too many nodes, aliases that expand
// too far or name a node they are in, more than one document.
Result<YAML::Node> load_policy_yaml(std::string_view text);

}  // namespace iogate
