// What nlohmann::json::parse takes in memory for a document, bounded from its text before parsing.
//
// The webhook lets a review be parsed by what that will take (webhook_server.h): a body's size
// alone says little, since parsing a 3 MiB AdmissionReview took 4 times its size for one long
// string, 13 for many short environment variables and 38 for an array of empty objects. The bound
// counts, for x86-64 with libstdc++ and glibc's malloc (16-byte chunks, 8 bytes of header, 32 at
// least):
//   - an object: its std::map (64); a member: its tree node (96) and a key over 15 bytes;
//   - an array: its std::vector (32) and 48 per element (16 each, capacity up to twice the size,
//     and the old buffer beside the new while it grows);
//   - a string value: its std::string (48) and text over 15 bytes; escapes only shrink it;
//   - the lexer's two buffers (the token, and its raw text for errors): 6 times the longest token,
//     and two chunks at least;
//   - freeing the tree: nlohmann's destructor does not recurse but moves the values below a
//     container onto a std::vector of its own (16 bytes each), the last child taken first, so
//     when a container is emptied the vector holds its children and, for each container around
//     it, the children before the one on the way down; 48 bytes for each of the most it holds at
//     once (capacity doubled, and the old buffer beside the new while it grows). A pod of 150,000
//     labels took 6 MB more while being freed than parsed.
// Numbers, booleans and null live in their 16-byte slot. tests/unit/webhook/json_footprint_test.cc
// checks the bound against what parsing and freeing take.
#pragma once

#include <cstddef>
#include <string_view>

namespace iogate {

// An upper bound on the heap bytes nlohmann::json::parse(text) holds at its peak, and its tree
// while being freed, for valid JSON (for invalid text, parsing stops early and holds less). One
// linear pass.
size_t json_footprint(std::string_view text);

}  // namespace iogate
