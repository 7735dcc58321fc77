// Syscall metadata: names, numbers and argument names/types, from the running kernel's
// syscall trace events when tracefs is mounted, else from a table generated at build time
// from <asm/unistd_64.h> (names and numbers only).
//
// Source of the format: the kernel's Documentation/trace/events.rst ("Event formats"): each
// event directory holds a `format` file
//
//   name: sys_enter_openat
//   ID: 633
//   format:
//   <TAB>field:unsigned short common_type;<TAB>offset:0;<TAB>size:2;<TAB>signed:0;
//   ... common_* fields, a blank line, then the event's own fields ...
//   <blank line>
//   print fmt: "...", ...
//
// For syscalls (kernel/trace/trace_syscalls.c) the own fields are `int __syscall_nr` then,
// for sys_enter_NAME, one field per argument, each stored as 8 bytes whatever its C type,
// with the type as the kernel's SYSCALL_DEFINE spelled it (after __user is expanded away:
// "const char *", "int", "umode_t"); sys_exit_NAME has `long ret`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// The prefix of x86-64's syscall wrappers (CONFIG_ARCH_HAS_SYSCALL_WRAPPER, since 4.17):
// __x64_sys_NAME takes the user's pt_regs.
inline constexpr std::string_view kSyscallWrapperPrefix = "__x64_sys_";

// The x86-64 syscalls whose kernel function, and so whose trace events and __x64_sys_
// wrapper, go by another name (arch/x86/entry/syscalls/syscall_64.tbl: uname is
// sys_newuname, fstat sys_newfstat, umount2 sys_umount, ...). The kernel's functions of
// those names (sys_uname, sys_fstat) are the old ones only 32-bit programs call.
// syscallKernelName("uname") is "newuname"; any other name is returned as it is.
std::string_view syscallKernelName(std::string_view x64_name);
// The reverse: syscallX64Name("newuname") is "uname"; any other name as it is.
std::string_view syscallX64Name(std::string_view kernel_name);
// For such a kernel name given as a syscall's ("newuname"), why it is refused and what to
// write instead; "" for any other name.
std::string syscallKernelNameMisuse(std::string_view name);

// One `field:` line of a format file.
struct TraceField {
    std::string type;             // C type as printed: "const char *", "unsigned short"
    std::string name;             // "filename"; an array field "char comm[16]" gives name "comm"
    std::uint32_t array_len = 0;  // N of "name[N]", 0 for scalars
    std::uint32_t offset = 0;     // bytes from the record start
    std::uint32_t size = 0;       // bytes
    bool is_signed = false;
    // __data_loc/__rel_loc: a 4-byte word locating variable-length data in the record
    // (type then ends in "[]", e.g. "char[]").
    bool dynamic = false;
};

// A parsed format file.
struct TraceEventFormat {
    std::string name;                // "sys_enter_openat"
    std::uint32_t id = 0;            // the event's ID line
    std::vector<TraceField> common;  // common_type, common_flags, ...
    std::vector<TraceField> fields;  // the event's own fields, in order
    std::string print_fmt;           // the text after "print fmt: "
};

// Parses one format file's text. Errors (EBADMSG, message names the 1-based line): a missing
// name:/ID:/format: header, a field line without field:/offset:/size:/signed:, a number that
// does not parse.
Result<TraceEventFormat> parseEventFormat(std::string_view text);

// One syscall argument as the tracer needs it.
struct SyscallArg {
    std::string name;  // "filename"
    std::string type;  // "const char *"
    std::uint32_t size = 8;
    bool is_pointer = false;       // the type ends in '*'
    bool is_string = false;        // char * or const char * (a path or buffer, see below)
    bool is_string_array = false;  // const char *const * (execve's argv, envp)
};

// Classifies a C type as printed in a format file. `char *` and `const char *` are both
// strings to this function; whether a given argument is NUL-terminated (a path) or a
// counted buffer (write's buf) is the formatter's knowledge (strace_format.hpp).
SyscallArg classifySyscallArg(std::string name, std::string type, std::uint32_t size = 8);

struct SyscallInfo {
    std::string name;              // "openat", the x86-64 name ("uname", not "newuname")
    int nr = -1;                   // x86-64 number, -1 when unknown
    std::vector<SyscallArg> args;  // empty and has_args false without tracefs
    bool has_args = false;         // args come from the kernel's format files
    std::uint32_t enter_id = 0;    // trace event IDs, 0 when unknown
    std::uint32_t exit_id = 0;
};

// Builds a SyscallInfo from the sys_enter_NAME format (required) and sys_exit_NAME format
// (optional, for its ID). Errors (EINVAL): not a sys_enter_ event, no __syscall_nr field,
// more than 6 arguments.
Result<SyscallInfo> syscallFromFormats(const TraceEventFormat& enter,
                                       const TraceEventFormat* exit = nullptr);

// Syscall names and x86-64 numbers generated at build time from <asm/unistd_64.h>,
// ordered by number.
struct SyscallName {
    const char* name;
    int nr;
};
std::span<const SyscallName> builtinSyscallNames();

class SyscallTable {
  public:
    // Every syscall of builtinSyscallNames(), without argument metadata.
    static SyscallTable builtin();

    // Reads <tracefs>/events/syscalls/sys_enter_*/format (and sys_exit_*) and merges them
    // with builtinSyscallNames() for the numbers. Errors: ENOENT (message names the
    // directory) when events/syscalls does not exist (tracefs not mounted, or a kernel
    // without CONFIG_FTRACE_SYSCALLS); EACCES (message says root is needed) when a directory
    // on the way cannot be searched (tracefs is mode 0700 on most systems). A format that
    // does not parse is skipped and named in problems() (its syscall keeps name and number);
    // unreadable files (EACCES) are skipped.
    static Result<SyscallTable> fromTracefs(const std::string& tracefs = "/sys/kernel/tracing");

    // builtin() whose entries read their own two format files from <tracefs>/events/syscalls
    // the first time find() returns them: start-up reads the few syscalls a trace names,
    // not all ~700 files (most of `probectl trace syscall:NAME`'s start-up under QEMU TCG).
    // A name missing from builtinSyscallNames() is looked up in tracefs too. Never fails: a
    // missing events/syscalls is one problems() line; a format that does not parse is named
    // there when its syscall is first found. Thread-safe.
    static SyscallTable load(const std::string& tracefs = "/sys/kernel/tracing");

    // Why some or all syscalls have no argument metadata ("FILE: format line 7: ..."),
    // in the order met; empty when every format parsed. For a load() table, only the
    // syscalls found so far count.
    std::vector<std::string> problems() const;
    // One line for the user when problems() is not empty ("" otherwise): syscall lines
    // will then show names and return values without arguments.
    std::string fallbackNote() const;

    // The syscall's entry, nullptr when unknown. Pointers stay valid as long as the table.
    const SyscallInfo* find(std::string_view name) const;
    const SyscallInfo* find(int nr) const;
    // Every entry sorted by name (a load() table first loads each builtin name's formats).
    const std::vector<SyscallInfo>& all() const;
    // At least one entry came from format files (for a load() table: so far).
    bool hasArgs() const;

  private:
    void add(SyscallInfo info);
    const SyscallInfo* findLoaded(std::string_view name) const;
    std::vector<SyscallInfo> syscalls_;  // sorted by name
    bool has_args_ = false;
    std::vector<std::string> problems_;
    // load() tables: what is read on demand, behind one lock; `loaded` parallels syscalls_.
    struct Lazy;
    std::shared_ptr<Lazy> lazy_;
};

}  // namespace probectl
#pragma GCC visibility pop
