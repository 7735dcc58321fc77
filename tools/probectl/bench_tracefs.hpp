// probectl bench: ftrace's own library reader. libtracefs's tracefs_iterate_raw_events()
// reads every CPU's trace_pipe_raw, parses each event with libtraceevent and hands the
// events to a callback oldest first across CPUs: per event, the work libctl does for a
// kernel-record reader (a checked record, merged across CPUs, to a callback). The library
// is loaded with dlopen, so only this row needs it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "probectl/result.hpp"

namespace probectl::cli::bench {

class TracefsReader {
  public:
    // Loads libtracefs, parses the event formats of `system` under the tracefs mount
    // `root` and finds `event` and its field `field`. ELIBACC when the library cannot be
    // loaded (Debian package libtracefs1), ENOENT when the event or field is not there.
    static Result<std::unique_ptr<TracefsReader>> open(const std::string& root,
                                                       const std::string& system,
                                                       const std::string& event,
                                                       const std::string& field);
    ~TracefsReader();
    TracefsReader(const TracefsReader&) = delete;
    TracefsReader& operator=(const TracefsReader&) = delete;

    // Reads on a thread of its own until stop(): each round iterates over what every CPU
    // holds, then waits for data (poll on trace_pipe_raw, 10 ms at most).
    void start();
    // Stops after a last round that reads what is left.
    void stop();
    // Events of `event` whose field was read; events any page said were lost before it.
    std::uint64_t events() const;
    std::uint64_t missed() const;

    struct Impl;

  private:
    explicit TracefsReader(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace probectl::cli::bench
