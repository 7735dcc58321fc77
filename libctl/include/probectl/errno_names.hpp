// errno names and descriptions for printing syscall results the way strace does
// ("-1 ENOENT (No such file or directory)").
//
// Names come from a table generated at build time from the system's
// <asm-generic/errno-base.h> and <asm-generic/errno.h> (libctl/src/gen_define_table.cmake),
// so they are the kernel's own spellings; for aliases (EWOULDBLOCK = EAGAIN, EDEADLOCK =
// EDEADLK) the first name the header defines numerically wins, as in strace. The kernel-
// internal restart codes 512..516 (include/linux/errno.h, never seen by user space but
// visible to a kernel tracer at syscall exit) are named too.
#pragma once

#include <string>
#include <string_view>

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// "ENOENT" for 2; "" for a number with no name.
std::string_view errnoName(int err);

// The C library's text for err ("No such file or directory", glibc's strerrordesc_np, the
// text strace prints), or a short explanation for the kernel-internal codes 512..516;
// "Unknown error N" otherwise.
std::string errnoDescription(int err);

// errno by name ("ENOENT" -> 2); -1 when unknown. For filters and tests.
int errnoByName(std::string_view name);

}  // namespace probectl
#pragma GCC visibility pop
