// probectl bench: `probectl trace` itself, as users run it (text or JSON Lines to a file),
// timed end to end against ftrace's trace_pipe text reader (bench_ftrace.cpp) on the same
// probe and events: wall time of the whole command, less the same command's start-up with
// no hits, so attach, kallsyms and exit are not counted against the per-event path.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "bench.hpp"

namespace probectl::cli::bench {

namespace {

Outcome traceRun(const Workload& w, bool json) {
    // The same ring as kernel-record's, so neither loses records to a small one.
    const std::string param = "/sys/module/probectl/parameters/buffer_kb";
    const std::uint64_t want = w.n * 256 / 1024 + 256;
    std::optional<ScopedSetting> ring;
    const std::string now = ScopedSetting::current(param);
    if (now.empty())
        return skip("kernel backend unavailable: no probectl module loaded");
    if (std::stoull(now) < want)
        ring.emplace(param, std::to_string(want));
    const std::string log = tempFile(json ? "trace-json" : "trace-text");
    std::vector<std::string> prefix = {
        selfExe(), "trace",
        w.mode == "calls" ? fmt::format("uprobe:{}:bench_fn x=%di:s64", w.binary)
                          : std::string("kprobe:__x64_sys_getppid r15=+0(%di):x64"),
        "-o", log};
    if (json)
        prefix.insert(prefix.end(), {"--format", "json"});
    prefix.push_back("--");
    Outcome o = timed(prefix, w);
    // An event line is the location, two spaces, the values; the summary names the spec.
    if (o.measure)
        o.measure->hits =
            countLines(log, json ? "\"type\":\"event\""
                                 : (w.mode == "calls" ? ":bench_fn  x=" : "getppid  r15="));
    std::filesystem::remove(log);
    return o;
}

Outcome runText(const Workload& w) {
    return traceRun(w, false);
}

Outcome runJson(const Workload& w) {
    return traceRun(w, true);
}

}  // namespace

Outcome lessStartUp(Outcome (*run)(const Workload&), const Workload& w) {
    Workload none = w;
    none.n = 0;
    Outcome zero = run(none);
    if (!zero.measure)
        return zero;
    Outcome o = run(w);
    if (!o.measure)
        return o;
    const std::uint64_t start = zero.measure->wall_ns;
    o.measure->elapsed_ns = o.measure->wall_ns > start ? o.measure->wall_ns - start : 0;
    return o;
}

Outcome runTraceText(const Workload& w) {
    return lessStartUp(runText, w);
}

Outcome runTraceJson(const Workload& w) {
    return lessStartUp(runJson, w);
}

}  // namespace probectl::cli::bench
