// Counts operator new calls in this test binary, for tests that check a path allocates
// nothing (itest::allocations()); otherwise the allocator is malloc's, as usual.
#include <atomic>
#include <cstdlib>
#include <new>

#include "itest_util.hpp"

namespace {
std::atomic<std::size_t> g_news{0};
}  // namespace

void* operator new(std::size_t n) {
    g_news.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}

std::size_t itest::allocations() {
    return g_news.load(std::memory_order_relaxed);
}
