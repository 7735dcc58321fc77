// User-space probe resolution: a uprobe/uretprobe/usdt ProbeSpec -> the (file, file offset,
// reference-counter offset) triple the kernel's uprobe API registers
// (uprobe_register(inode, offset, ref_ctr_offset, consumer)), with an explanation of how
// each number was found.
//
// Spec forms and which address space each number is in: probe_spec.hpp. Addresses in
// UserTarget are named by kind: ELF address (st_value space, readelf -s) or file offset.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/probe_spec.hpp"
#include "probectl/result.hpp"
#include "probectl/usdt.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

class UserResolveCache;

struct UserResolveOptions {
    // 0: resolve in this process's view of the filesystem. Otherwise resolve as process
    // `pid` sees things: library names from its /proc/PID/maps (then its ld.so.cache), files
    // through /proc/PID/root (its mount namespace), va= addresses through its maps.
    pid_t pid = 0;
    // Separate debug files (DIR/.build-id/xx/yyyy.debug) for stripped files; looked up under
    // the process's root when pid is set. "" never looks.
    std::string debug_dir = "/usr/lib/debug";
    // Where resolveUserSpecAll keeps its answers to give them again (UserResolveCache);
    // null: every call reads the file.
    std::shared_ptr<UserResolveCache> cache;
};

// resolveUserSpecAll's answers, and SpecExpander's expansions of user-space globs, kept for
// one command to ask again: count --by resolves every name of a glob twice, to share the
// kernel's map budget among the probes and to attach them, and each answer read the file
// (symbol table, DWARF) anew. An answer is kept per spec (with its text, which errors quote)
// and options. A file replaced on disk meanwhile is not noticed: keep one no longer than a
// command. Safe to share between threads.
class UserResolveCache {
  public:
    UserResolveCache();
    ~UserResolveCache();
    UserResolveCache(const UserResolveCache&) = delete;
    UserResolveCache& operator=(const UserResolveCache&) = delete;

    struct Impl;  // libctl's own
    Impl& impl() const { return *impl_; }

  private:
    std::unique_ptr<Impl> impl_;
};

// One kernel uprobe: what the netlink request needs (path, file_offset, ref_ctr_offset,
// is_return) plus what a person needs to check it.
struct UserTarget {
    SpecKind kind = SpecKind::Uprobe;  // Uprobe, Uretprobe or Usdt
    bool is_return = false;            // uretprobe: probe the function's return
    // The file for the kernel to open, valid in the tracer's mount namespace: an absolute
    // path, /proc/PID/root/... when PID lives in another mount namespace.
    std::string path;
    std::string file;  // the same file as the traced process names it (for display)
    // Byte offset of the probed instruction in `path`: the uprobe offset.
    std::uint64_t file_offset = 0;
    // USDT semaphore: its byte offset in `path`, for the kernel to increment in every
    // process mapping the file while the probe exists (uprobe ref_ctr_offset); 0 = none.
    std::uint64_t ref_ctr_offset = 0;
    // The semaphore's file page is mapped by an earlier writable segment too
    // (UsdtProbe::semaphore_page_shared): a process exec'd while the probe exists reads
    // the semaphore as 0 unless the tracer raises it itself after the dynamic loader ran.
    bool semaphore_page_shared = false;
    // The function holding the location, demangled, with @VERSION when versioned ("" when
    // the location is in no known function, or for a USDT probe in none).
    std::string symbol;
    std::uint64_t symbol_offset = 0;  // bytes from the function's start
    std::uint64_t vaddr = 0;          // ELF address of the location (not a runtime address)
    std::string usdt_provider;        // usdt only
    std::string usdt_name;            // usdt only
    std::vector<UsdtArg> usdt_args;   // usdt only: decoded argument specs, in order
    // uretprobe: what shows the file unwinds exceptions ("it uses __cxa_throw"), "" when
    // nothing does. A kernel uretprobe's substituted return address has no unwind
    // information: an exception unwinding through the probed frame ends the program.
    std::string exception_use;
    // An inlined copy of a function (DWARF's DW_TAG_inlined_subroutine): the function's name
    // as the spec wrote it, and where the call was written ("prog.c:20", "" if unknown).
    // `symbol` is then the function the copy sits in. "" for everything else.
    std::string inlined_from;
    std::string call_site;
    // Something the user should know before trusting the counts (calls this probe cannot
    // see, such as inlined copies a return probe cannot reach), one line; "" when none.
    std::string note;
    // How the numbers were found, one step per line (file lookup, symbol table, segment
    // arithmetic, maps line, note fields), for `probectl resolve`.
    std::string how;
};

// Resolves a uprobe/uretprobe/usdt spec to exactly one kernel probe. Errors (the message
// starts with the spec text and names the file, symbol or field at fault):
//  EINVAL   not a user-space spec; a bare 0xN together with a pid (say off= or va=); va=
//           without a pid; a location outside executable code; +OFFSET past the function's
//           end; a uretprobe not at a function entry; an IFUNC (the implementations found
//           are listed with the spec to probe one); USDT arguments that do not decode
//  ENOENT   no such file, library, function or USDT probe (similar names suggested)
//  ENOTUNIQ several functions of that name (each listed with ELF address, size, source
//           file and section, and its off= spec); a USDT name under several providers; a
//           USDT probe with several sites (resolveUserSpecAll takes them all)
//  ENOEXEC  not an ELF executable or shared object
//  others   errno of opening the file or reading /proc/PID/maps (ESRCH, EACCES)
Result<UserTarget> resolveUserSpec(const ProbeSpec& spec, const UserResolveOptions& options = {});

// As resolveUserSpec, but a location with several sites yields one UserTarget per site:
//  - a USDT probe whose macro was expanded in several places (or inlined), in note order;
//    every site shares the semaphore;
//  - uprobe:PATH:FUNC where the file's DWARF (its own or its debug file's) shows FUNC
//    inlined into callers: the out-of-line copy (if any) first, then each inlined copy by
//    address (inlined_from set). A return probe or fetch arguments cannot work at an inlined
//    copy: then only the out-of-line copy is probed and its `note` lists the copies missed,
//    and with no out-of-line copy the spec is refused (EINVAL) with that list.
// Other specs give one element.
Result<std::vector<UserTarget>> resolveUserSpecAll(const ProbeSpec& spec,
                                                   const UserResolveOptions& options = {});

// A spec's PATH turned into a file.
struct UserFile {
    std::string path;  // for the kernel and for reading (tracer's namespace)
    std::string file;  // as the process names it
    std::string root;  // "" or "/proc/PID/root" (prefix of path)
    std::string how;   // "library 'libc': ld.so.cache (...): libc.so.6 => ..."
};

// PATH (a path with '/', or a library name) -> file, as UserTarget::path explains. Errors:
// ENOENT (no such file / library), ENOTUNIQ (library name matches several files), EINVAL
// (a relative path with a pid), ESRCH/EACCES (the pid's /proc entries).
Result<UserFile> findUserFile(std::string_view path_or_library,
                              const UserResolveOptions& options = {});

}  // namespace probectl
#pragma GCC visibility pop
