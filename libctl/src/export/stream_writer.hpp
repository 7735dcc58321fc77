// The part of the stream writers (chrome, perfetto) that is not the format: each event is
// encoded into buf_, which write() hands to the stream in one call. A failed write's errno
// is taken at once (a stream keeps only its failbit); EIO when the stream left none.
#pragma once

#include <cerrno>
#include <ostream>
#include <string>

#include "probectl/trace_export.hpp"

namespace probectl::exporter {

class StreamTraceWriter : public TraceWriter {
  public:
    explicit StreamTraceWriter(std::ostream& out) : out_(out) {}
    Result<void> flush() override {
        errno = 0;
        out_.flush();
        return status();
    }

  protected:
    Result<void> write() {
        errno = 0;
        out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        return status();
    }
    std::string buf_;

  private:
    Result<void> status() {
        if (out_)
            return {};
        if (!err_)
            err_ = errno ? errno : EIO;
        return makeError(err_, "cannot write the trace");
    }
    std::ostream& out_;
    int err_ = 0;
};

}  // namespace probectl::exporter
