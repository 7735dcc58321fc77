// The part of the stream writers (chrome, perfetto) that is not the format: each event is
// encoded into buf_, which write() hands to the stream in one call.
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
        out_.flush();
        return status();
    }

  protected:
    Result<void> write() {
        out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        return status();
    }
    std::string buf_;

  private:
    Result<void> status() const {
        return out_ ? Result<void>{} : makeError(EIO, "cannot write the trace");
    }
    std::ostream& out_;
};

}  // namespace probectl::exporter
