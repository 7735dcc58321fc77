// strace-style text for one syscall: `openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3`.
//
// The conventions are strace's as observed on Debian 12's strace 6.1 (the unit test compares
// against lines it printed; tests/unit/fixtures/strace/):
//  - the call is padded with spaces to column 40 before "= RESULT" (strace's alignment);
//  - a failing call prints "= -1 ENAME (description)"; a kernel-internal restart code prints
//    "= ? ENAME (description)";
//  - strings in double quotes, escaping \t \n \v \f \r \" \\ by name and other bytes outside
//    0x20..0x7e in octal with the fewest digits (three when the next byte is '0'..'7'); at
//    most `string_limit` bytes of data buffers, then `"..."...`; paths are not cut;
//  - NULL for a zero pointer, 0x hex for other pointers and for pointers the call itself
//    refused with EFAULT; memory the tracer could not read although the call did not fail
//    with EFAULT prints <unreadable: ENAME> (strace would print the bare pointer);
//  - flag sets as NAME|NAME|0xREST, or "0x10 /* O_??? */" when no bit has a name; a value
//    of a set by name or as "0x9 /* SEEK_??? */"; file modes in octal (0644, the low 16
//    bits), AT_FDCWD for -100, fds as int, signals by name (SIGRTMIN, SIGRT_n; others as int).
// getrandom's buffer prints every byte in hex ("\x5c\xb0"), as strace prints it; wait4 shows
// the status it wrote ("[{WIFEXITED(s) && WEXITSTATUS(s) == 3}]", read at the return) and
// its rusage as an address; futex prints the arguments its operation reads (FUTEX_WAIT's
// timeout read as a timespec).
// Decoders exist for openat, open, creat, read, write, pread64, pwrite64, close, mmap,
// munmap, mprotect, clone, execve, exit, exit_group, nanosleep, clock_nanosleep (clock names,
// TIMER_ABSTIME, the requested timespec, the time left when a signal interrupted a relative
// sleep, read at the return), umask (octal in and out), access, faccessat, faccessat2,
// unlinkat, lseek, dup3, getrandom, wait4, futex, fcntl (command, its argument, the flags or signal
// a getter returns; lock structures as addresses), socket, socketpair, pipe, pipe2 (the fds, read
// at the return), rt_sigprocmask (how; the sets as addresses) and argument-less calls; any other
// syscall prints its arguments from the syscall metadata (strings quoted, pointers hex, int
// types in decimal, umode_t in octal, dfd/olddfd/newdfd as AT_FDCWD or int, sig by name: so
// kill, tgkill, rt_sigaction (its structures as addresses)) or, without metadata, six hex
// values.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/syscall_meta.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// Memory fetched for a pointer argument.
struct FetchedBytes {
    std::string bytes;       // what was read (no terminating NUL)
    bool truncated = false;  // the fetch stopped at its bound before the data ended
    bool faulted = false;    // the read faulted: see memArg in strace_format.cpp
    int error = 0;           // the failed read's errno when known; 0: EFAULT (the kernel's)
};

struct SyscallRecord {
    std::string name;                     // "openat"
    std::array<std::uint64_t, 6> args{};  // raw argument registers
    // Fetched memory per argument, for pointer arguments the tracer read: paths (at entry),
    // input buffers (write: at entry, length = count), output buffers (read: at exit,
    // length = return value).
    std::array<std::optional<FetchedBytes>, 6> mem;
    // execve: argv strings when fetched (else the pointer prints), whether more followed
    // than were read, and the envp count (at least, when envc_more).
    std::optional<std::vector<std::string>> argv;
    bool argv_more = false;
    std::optional<std::size_t> envc;
    bool envc_more = false;
    std::optional<std::int64_t> retval;  // nullopt: the call has not returned (prints " = ?")
};

struct StraceOptions {
    std::size_t string_limit = 32;  // strace -s default
    bool align = true;              // pad to column 40 before " = "
};

// The whole line (no trailing newline). `info` supplies argument names/types for syscalls
// without a decoder; nullptr prints six hex arguments for them.
std::string formatSyscall(const SyscallRecord& rec, const SyscallInfo* info,
                          const StraceOptions& opts = {});

// The call's arguments one by one, in the line's order, each with its register (0-based
// argument index) and text ("AT_FDCWD", "\"/etc/passwd\"", "O_RDONLY"; clone's
// "flags=..."); a mode strace leaves out is not there.
struct StraceArg {
    std::size_t arg = 0;
    std::string text;
};
std::vector<StraceArg> straceArgs(const SyscallRecord& rec, const SyscallInfo* info,
                                  const StraceOptions& opts = {});

// Pieces, exposed for other printers and tests.
// Quoted, escaped bytes; "..." appended after the quote when more data exists than shown
// (bytes longer than `limit`, or `truncated`). limit = SIZE_MAX: no cut.
std::string straceQuote(std::string_view bytes, std::size_t limit, bool truncated = false);
// A name from the traced system (a comm) in a text column, as trace's text prints it: as it
// is when it is UTF-8 without control characters, else straceQuote()d, so that a newline
// cannot split a line nor an escape sequence reach the terminal.
std::string shownName(std::string_view bytes);
// A path or name in a message, between single quotes ('./app') when shownName leaves it as
// it is, else as shownName quotes it ("x\33[31m").
std::string shownQuoted(std::string_view bytes);
std::string straceOpenFlags(std::uint64_t flags);   // "O_RDONLY|O_CLOEXEC"
std::string straceMode(std::uint64_t mode);         // "0644", "000" (umode_t: 16 bits)
std::string straceMmapProt(std::uint64_t prot);     // "PROT_READ|PROT_WRITE", "PROT_NONE"
std::string straceMmapFlags(std::uint64_t flags);   // "MAP_PRIVATE|MAP_ANONYMOUS"
std::string straceCloneFlags(std::uint64_t flags);  // "CLONE_VM|...|SIGCHLD", "0"
std::string straceDirFd(std::uint64_t fd);          // "AT_FDCWD" or the int
std::string stracePointer(std::uint64_t p);         // "NULL" or "0x7ffc..."
// The line strace prints when a traced thread ends, from its wait status: "+++ exited with 3
// +++", "+++ killed by SIGKILL +++", "+++ killed by SIGSEGV (core dumped) +++".
std::string straceEndLine(int wait_status);
// "= 3", "= -1 ENOENT (No such file or directory)", "= 0x7f00..." (mmap), "= ?" (nullopt)
std::string straceReturn(std::string_view syscall, std::optional<std::int64_t> retval);
// Whether strace prints the return value of `syscall` as an address, in hex: mmap, mremap, brk,
// shmat (but for an error).
bool syscallReturnsAddress(std::string_view syscall);
// A return value that is an address as strace prints it: "0x7f00...", "0" for 0.
std::string straceAddress(std::uint64_t v);

// What a tracer must read from memory for a syscall so formatSyscall can print it like
// strace: which argument, and when.
struct SyscallMemHint {
    enum class Kind {
        Path,         // NUL-terminated string at entry (paths: not cut by string_limit)
        InBuffer,     // `len_arg` bytes at entry (write's buf)
        OutBuffer,    // return-value bytes at exit (read's buf)
        PtrArray,     // `len_arg` pointers at entry (execve's argv and envp: NULL ends them)
        ArrayString,  // the string the `len_arg`-th pointer of the array at `arg` points to
        Timespec,     // a struct timespec (two 64-bit words) the call reads (nanosleep's
                      // request, futex's timeout), read at entry: the call may write over it
                      // (coreutils' sleep passes its request as the remaining time too)
        FdPair,       // two ints the call writes (pipe's, pipe2's and socketpair's fds),
                      // read at the return
        Int,          // one int the call writes (wait4's status), read at the return
        TimespecOut,  // a struct timespec the call writes (the time left an interrupted
                      // nanosleep writes), read at the return
    };
    std::size_t arg = 0;  // 0-based argument index
    Kind kind = Kind::Path;
    std::size_t len_arg = 0;  // InBuffer: index of the length argument; PtrArray: count;
                              // ArrayString: element index
};
// execve's argv: the first kExecArgvMax strings (strace -v shows them all; beyond these
// "..." follows), and its environment counted up to kExecEnvMax variables.
inline constexpr std::size_t kExecArgvMax = 8;
inline constexpr std::size_t kExecEnvMax = 64;
// Hints for the decoded syscalls; for others, a Path hint per metadata argument whose type
// is a char pointer (is_string). Empty for unknown syscalls without metadata.
std::vector<SyscallMemHint> syscallMemHints(std::string_view syscall, const SyscallInfo* info);

}  // namespace probectl
#pragma GCC visibility pop
