#include "std_streams.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ostream>

#include <unistd.h>

#include "cli.hpp"

namespace probectl::cli {

FdOutBuf::FdOutBuf(int fd, std::size_t size, bool owned) : fd_(fd), owned_(owned), buf_(size) {
    setp(buf_.data(), buf_.data() + buf_.size());
}

FdOutBuf::~FdOutBuf() {
    sync();
    if (owned_)
        ::close(fd_);
}

FdOutBuf::int_type FdOutBuf::overflow(int_type c) {
    if (sync() != 0)
        return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
        *pptr() = traits_type::to_char_type(c);
        pbump(1);
    }
    return traits_type::not_eof(c);
}

int FdOutBuf::sync() {
    const char* p = pbase();
    int rc = 0;
    while (p < pptr()) {
        const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(pptr() - p));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (!err_)
                err_ = n < 0 ? errno : EIO;
            rc = -1;  // the rest is dropped, as stdio does: a later write may still go through
            break;
        }
        p += n;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return rc;
}

int flushStream(std::ostream& os, std::FILE* file) {
    // std::cout passes its writes on to stdout: a failed one may be seen by either, and the
    // rest of stdout's buffer is written (and may fail) only now, with the errno to tell.
    errno = 0;
    os.flush();
    const bool os_failed = !os;
    const int os_errno = errno;
    int err = 0;
    if (const auto* fd = dynamic_cast<const FdOutBuf*>(os.rdbuf()))
        err = fd->error();
    if (file && !err) {
        errno = 0;
        if (std::fflush(file) != 0)
            err = errno;
    }
    if (!err && os_failed)
        err = os_errno;
    if (!err && (os_failed || (file && std::ferror(file))))
        err = EIO;
    return err;
}

int finishStreams(int code, std::string_view who, std::ostream& out, std::FILE* out_file,
                  std::ostream& err, std::FILE* err_file, bool out_told) {
    const int out_errno = flushStream(out, out_file);
    if (out_errno && !out_told)
        err << fmt::format("{}: cannot write {} ({})\n", who, kStandardOutput,
                           std::strerror(out_errno));
    // Nothing can be said of standard error failing: only the status tells it.
    const int err_errno = flushStream(err, err_file);
    if ((out_errno || err_errno) && code == kExitOk)
        return kExitRuntime;
    return code;
}

}  // namespace probectl::cli
