// Workload for uretprobes in C++ code that throws (unreturned_test.cpp):
//   unwind_cxx N   un_throw(i) for i = 1..N; odd i throw and main catches them: N entries,
//                  N/2 returns; prints "caught=C returned=R"
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

__attribute__((noipa)) long un_throw(long i) {
    if (i % 2)
        throw std::runtime_error("odd");
    return i;
}

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::strtol(argv[1], nullptr, 0) : 10;
    long caught = 0, returned = 0;
    for (long i = 1; i <= n; i++) {
        try {
            un_throw(i);
            returned++;
        } catch (const std::runtime_error&) {
            caught++;
        }
    }
    std::printf("caught=%ld returned=%ld\n", caught, returned);
    return 0;
}
