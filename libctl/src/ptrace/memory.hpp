// A traced process's memory. Writes (int3 bytes into read-only text) go through
// /proc/PID/mem, which writes with FOLL_FORCE for a ptrace tracer, one pread/pwrite per
// access instead of PTRACE_PEEKTEXT/POKETEXT's word at a time. Reads of data use
// process_vm_readv(2), which needs no open file.
//
// A /proc/PID/mem file stays bound to the address space it was opened on: after exec it
// reads and writes nothing (EOF / EIO), so the engine opens a new one per address space.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "probectl/result.hpp"

namespace probectl::ptrace {

class ProcMem {
  public:
    ProcMem() = default;
    // Opens /proc/PID/mem read-write. Errors: errno of open (ESRCH/ENOENT: gone; EACCES).
    static Result<ProcMem> open(pid_t pid);
    ProcMem(ProcMem&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    ProcMem& operator=(ProcMem&& o) noexcept;
    ProcMem(const ProcMem&) = delete;
    ProcMem& operator=(const ProcMem&) = delete;
    ~ProcMem();

    // Exactly `len` bytes at process address `addr`, or EIO naming the address.
    Result<void> read(std::uint64_t addr, void* buf, std::size_t len) const;
    Result<void> write(std::uint64_t addr, const void* buf, std::size_t len) const;
    bool valid() const { return fd_ >= 0; }

  private:
    int fd_ = -1;
};

// process_vm_readv of `len` bytes at `addr` in `pid` (any thread id works). Errors: EFAULT
// (unmapped), ESRCH (gone), EPERM.
Result<void> readRemote(pid_t pid, std::uint64_t addr, void* buf, std::size_t len);

}  // namespace probectl::ptrace
