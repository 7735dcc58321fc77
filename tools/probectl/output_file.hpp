// Every command's -o FILE: one rule for how it is written and what a failed write leaves.
// The file is written through FdOutBuf, which keeps the errno of the write that failed (a
// full disk's ENOSPC, RLIMIT_FSIZE's EFBIG); an output whose writing failed is removed, never
// left incomplete. `-o -` is standard output for what prints lines (trace's and report's text
// and json, count's tables); a trace file or timeline refuses it.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "probectl/result.hpp"
#include "std_streams.hpp"

namespace probectl::cli {

// -o -: standard output, for the formats that print lines.
inline bool isStandardOutputName(std::string_view output) {
    return output == "-";
}

// `e` (a failed write to `path`) after removing the incomplete output: a regular file, or
// with `ctf` a directory and its files (one that existed before, `dir_existed`, stays,
// emptied). Only what probectl made: a device (/dev/full) stays. The error says what was
// removed.
Error removeIncomplete(const Error& e, const std::string& path, bool ctf = false,
                       bool dir_existed = false);

// An -o FILE that prints lines: created (truncated) by open(), O_CLOEXEC so that a traced
// command does not inherit it. stream() fails every write until it is open.
class OutputFile {
  public:
    OutputFile() = default;
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // Errors: "cannot write PATH" with open(2)'s errno.
    Result<void> open(const std::string& path, std::size_t buffer = 8192);
    bool isOpen() const { return buf_.has_value(); }
    const std::string& path() const { return path_; }
    std::ostream& stream() { return os_; }
    // The output failed with `e`: closed, then removed (removeIncomplete).
    Error discard(const Error& e);

  private:
    std::string path_;
    std::optional<FdOutBuf> buf_;
    std::ostream os_{nullptr};
};

// The errno of a failed write to `os`: FdOutBuf's own when `os` writes through one, else
// errno (0 for none), else EIO. 0 while `os` is good.
int streamErrno(const std::ostream& os);

}  // namespace probectl::cli
