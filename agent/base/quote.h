// User input quoted into a one-line message. Whatever the user gave (a flag's value, a policy
// field, a kubeconfig entry) may be megabytes long or hold a newline; an error line must still be
// one short line that names what was wrong. Every message that quotes user input goes through here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace iogate {

// How much of a value a message shows: enough to recognise it, short enough for one line.
inline constexpr size_t kQuotedValueMax = 64;

// "4q" → `"4q"`. Longer than kQuotedValueMax bytes: `a value of 10,000,000 bytes starting "abc…"`
// (cut on a UTF-8 character boundary). Control characters show as \xNN, so the line stays one.
std::string quote_value(std::string_view value);

// Untrusted text (a request's field, a parser's message) made fit for one log line: control
// characters and bytes that are not UTF-8 as \xNN, at most `max` bytes (cut on a character
// boundary, "..." appended).
std::string log_safe(std::string_view text, size_t max = 200);

// The Levenshtein distance, for "did you mean" suggestions in those messages.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace iogate
