// The heap this test binary uses and its peak, as glibc sizes the blocks (malloc_usable_size),
// counted by replacing operator new and delete (json_footprint_test.cc defines them): a test
// measures what a piece of work takes at most, threads included, from reset_heap_peak() on.
#pragma once

#include <cstddef>

namespace iogate::test {

size_t heap_in_use();
size_t heap_peak();
// From now on heap_peak() counts from what is in use now; returns that.
size_t reset_heap_peak();

}  // namespace iogate::test
