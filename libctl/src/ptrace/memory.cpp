#include "ptrace/memory.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

namespace probectl::ptrace {

Result<ProcMem> ProcMem::open(pid_t pid) {
    const auto path = fmt::format("/proc/{}/mem", pid);
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return makeError(errno, fmt::format("cannot open {}", path));
    ProcMem m;
    m.fd_ = fd;
    return m;
}

ProcMem& ProcMem::operator=(ProcMem&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = o.fd_;
        o.fd_ = -1;
    }
    return *this;
}

ProcMem::~ProcMem() {
    if (fd_ >= 0)
        ::close(fd_);
}

Result<void> ProcMem::read(std::uint64_t addr, void* buf, std::size_t len) const {
    const ssize_t n = ::pread(fd_, buf, len, static_cast<off_t>(addr));
    if (n != static_cast<ssize_t>(len))
        return makeError(n < 0 ? errno : EIO,
                         fmt::format("cannot read {} bytes at {:#x}", len, addr));
    return {};
}

Result<void> ProcMem::write(std::uint64_t addr, const void* buf, std::size_t len) const {
    const ssize_t n = ::pwrite(fd_, buf, len, static_cast<off_t>(addr));
    if (n != static_cast<ssize_t>(len))
        return makeError(n < 0 ? errno : EIO,
                         fmt::format("cannot write {} bytes at {:#x}", len, addr));
    return {};
}

Result<void> readRemote(pid_t pid, std::uint64_t addr, void* buf, std::size_t len) {
    iovec local{buf, len};
    iovec remote{reinterpret_cast<void*>(addr), len};
    const ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n != static_cast<ssize_t>(len))
        return makeError(n < 0 ? errno : EFAULT,
                         fmt::format("cannot read {} bytes at {:#x} in {}", len, addr, pid));
    return {};
}

}  // namespace probectl::ptrace
