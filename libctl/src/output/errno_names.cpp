// errno names from the generated header table, descriptions from the C library.
#include "probectl/errno_names.hpp"

#include <fmt/format.h>

#include <cstring>

namespace probectl {

namespace {

struct ErrnoName {
    const char* name;
    int nr;
};

constexpr ErrnoName kNames[] = {
#include "errno_names.inc"
};

// include/linux/errno.h: restart codes the kernel turns into EINTR or a restart before
// user space sees them. Worded as strace 6.1 prints them, so that lines compare.
constexpr struct {
    int nr;
    const char* name;
    const char* text;
} kKernelOnly[] = {
    {512, "ERESTARTSYS", "To be restarted if SA_RESTART is set"},
    {513, "ERESTARTNOINTR", "To be restarted"},
    {514, "ERESTARTNOHAND", "To be restarted if no handler"},
    {515, "ENOIOCTLCMD", "No such ioctl command"},
    {516, "ERESTART_RESTARTBLOCK", "Interrupted by signal"},
};

}  // namespace

std::string_view errnoName(int err) {
    for (const auto& e : kNames)
        if (e.nr == err)
            return e.name;
    for (const auto& k : kKernelOnly)
        if (k.nr == err)
            return k.name;
    return {};
}

std::string errnoDescription(int err) {
    for (const auto& k : kKernelOnly)
        if (k.nr == err)
            return k.text;
    // strerrordesc_np: thread-safe and locale-independent, unlike strerror.
    if (const char* d = ::strerrordesc_np(err))
        return d;
    return fmt::format("Unknown error {}", err);
}

int errnoByName(std::string_view name) {
    for (const auto& e : kNames)
        if (name == e.name)
            return e.nr;
    for (const auto& k : kKernelOnly)
        if (name == k.name)
            return k.nr;
    return -1;
}

}  // namespace probectl
