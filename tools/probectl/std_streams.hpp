// The standard streams at exit: everything written must have reached them. As coreutils
// do, a failed write to standard output is said on standard error, and a failed write to
// either stream makes the exit status 1 when it would have been 0. A non-zero status (a
// failure found earlier, CMD's own status or 128+N with `-- CMD`) is kept: it already says
// the run did not go as asked, and with `-- CMD` it is what scripts read of CMD.
#pragma once

#include <cstdio>
#include <iosfwd>
#include <streambuf>
#include <string_view>
#include <vector>

namespace probectl::cli {

// std::cout's buffer in main(), and that of an -o FILE the printer writes: writes the
// descriptor with write(2) and keeps the errno of the first write that failed. Through stdio
// the errno was lost once stdio had dropped its buffer: a `--help` longer than the buffer said
// only "Input/output error" on /dev/full, a full disk the same. `owned`: closed at the end.
class FdOutBuf final : public std::streambuf {
  public:
    explicit FdOutBuf(int fd, std::size_t size = 8192, bool owned = false);
    ~FdOutBuf() override;
    FdOutBuf(const FdOutBuf&) = delete;
    FdOutBuf& operator=(const FdOutBuf&) = delete;
    int error() const { return err_; }  // 0 while every write went through

  protected:
    int_type overflow(int_type c) override;
    int sync() override;

  private:
    int fd_;
    bool owned_;
    int err_ = 0;
    std::vector<char> buf_;
};

// Flushes `os`, then `file` (stdout, for anything written with stdio): 0 when every write
// went through, else the errno of a write that failed (FdOutBuf's when `os` writes through
// one; EIO when it is not known any more). `file` may be null.
int flushStream(std::ostream& os, std::FILE* file);

// `code` after flushing both streams. `who` prefixes the message ("probectl list");
// `out_told` says the command already reported the failed write to `out`.
int finishStreams(int code, std::string_view who, std::ostream& out, std::FILE* out_file,
                  std::ostream& err, std::FILE* err_file, bool out_told);

}  // namespace probectl::cli
