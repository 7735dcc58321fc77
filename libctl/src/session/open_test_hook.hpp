// A test-only hook into Session::open (session.cpp), for the VM tests of following forks: no
// production code sets it, and it is not part of libprobectl.so's ABI (hidden, like the rest
// of src/).
#pragma once

#include <functional>

namespace probectl::test_hooks {

// With follow, called by Session::open after it set the tgid filter and read the followed
// processes' children from /proc, before it adds those children to the filter: a process a
// test forks from a followed one here is in the filter only by the module's following of the
// fork, which the second step must keep. Empty (not called) unless a test sets it; one test
// at a time.
inline std::function<void()> afterReadingChildrenOnOpen;

}  // namespace probectl::test_hooks
