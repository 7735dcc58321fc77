// /proc/PID/maps: which file each range of a process's address space maps, and from
// which file offset. Line format (proc(5), fs/proc/task_mmu.c show_map_vma):
//   START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]
//   55d0c7a00000-55d0c7a22000 r--p 00000000 fd:01 1311 /usr/bin/cat
// START, END, OFFSET and the device numbers are hex; INODE is decimal; PATH may end in
// " (deleted)" and is absent for anonymous mappings.
//
// A process address inside a file mapping is at file offset
//   address - START + OFFSET
// which is how a runtime address becomes the uprobe offset without knowing the load bias.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct ProcMapping {
    std::uint64_t start = 0;   // process address, inclusive
    std::uint64_t end = 0;     // process address, exclusive
    std::string perms;         // "r-xp"
    std::uint64_t offset = 0;  // file offset mapped at `start`
    unsigned dev_major = 0;
    unsigned dev_minor = 0;
    std::uint64_t inode = 0;  // 0 for anonymous mappings
    std::string path;         // as the process sees it (its mount namespace); "" anonymous,
                              // "[heap]", "[stack]", ... for special mappings
    bool deleted = false;     // the file was unlinked (" (deleted)" stripped from path)

    bool isFile() const { return inode != 0 && !path.empty() && path[0] == '/'; }
    bool executable() const { return perms.size() > 2 && perms[2] == 'x'; }
    bool writable() const { return perms.size() > 1 && perms[1] == 'w'; }
    bool contains(std::uint64_t addr) const { return addr >= start && addr < end; }
    // Process address -> file offset (the caller checks contains()).
    std::uint64_t fileOffset(std::uint64_t addr) const { return addr - start + offset; }
    // Whether byte `off` of the mapped file is mapped here (written without overflow).
    bool holdsFileOffset(std::uint64_t off) const {
        return off >= offset && off - offset < end - start;
    }
    // File offset -> process address (the caller checks holdsFileOffset()).
    std::uint64_t address(std::uint64_t off) const { return start + (off - offset); }
};

class ProcMaps {
  public:
    // Parses maps text. Errors: EINVAL naming the first line that does not parse.
    static Result<ProcMaps> parse(std::string_view text);
    // Reads /proc/PID/maps. Errors: ESRCH when no such process; errno of reading
    // (EACCES without ptrace access to it).
    static Result<ProcMaps> read(pid_t pid);

    const std::vector<ProcMapping>& mappings() const { return maps_; }
    // The mapping holding the process address, or nullptr.
    const ProcMapping* containing(std::uint64_t addr) const;
    // Paths of the mapped files whose file name is `name` or a versioned form of it:
    // "libc" and "libc.so" match libc.so.6 and libc-2.31.so, "libc.so.6" only itself. Each
    // path once, in address order.
    std::vector<std::string> filesNamed(std::string_view name) const;

  private:
    std::vector<ProcMapping> maps_;
};

// Whether the file name (no directory) is library `name` by the rules of filesNamed.
bool libraryNameMatches(std::string_view file_name, std::string_view name);

// A /proc text file whole (/proc/PID/stat, comm, ...): nullopt when it cannot be opened;
// what was read before a read error. read(2), not a stream: a process that ends while its
// file is read fails the read with ESRCH, which libstdc++'s filebuf throws through
// istreambuf_iterator.
std::optional<std::string> readProcFile(const std::string& path);

}  // namespace probectl
#pragma GCC visibility pop
