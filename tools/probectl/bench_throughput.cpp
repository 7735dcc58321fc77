// probectl bench --throughput: the search for the highest lossless rate, the report, and
// the count of events in a trace_pipe_raw page (ftrace-stream's records).
#include "bench_throughput.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace probectl::cli::bench {

double trialRate(const Trial& t, std::uint64_t n) {
    return t.elapsed_ns ? static_cast<double>(n) * 1e9 / static_cast<double>(t.elapsed_ns) : NAN;
}

Trial judge(const Measure& m, std::uint64_t n, std::uint64_t gap_ns) {
    Trial t;
    t.gap_ns = gap_ns;
    t.elapsed_ns = m.elapsed_ns;
    const std::uint64_t hits = m.hits.value_or(0);
    const std::uint64_t records = m.records.value_or(0);
    t.complete = hits == n && m.records && records == n && m.lost == 0;
    if (!t.complete) {
        if (!m.records)
            t.shortfall = "no record count";
        else
            t.shortfall = fmt::format("{} of {} records", records, n);
        if (hits != n)
            t.shortfall += fmt::format(", {} hits", hits);
        if (m.lost)
            t.shortfall += fmt::format(", {} lost", m.lost);
        if (m.lost && !m.lost_detail.empty())
            t.shortfall += fmt::format(" ({})", m.lost_detail);
    }
    return t;
}

RateSearch searchRate(const std::string& tracer, const TrialRunner& run, std::uint64_t n,
                      unsigned threads, unsigned max_paced) {
    RateSearch s;
    s.tracer = tracer;
    auto attempt = [&](std::uint64_t gap) -> std::optional<Trial> {
        Outcome o = run(gap);
        if (!o.measure) {
            s.error = o.error.empty() ? "skipped: " + o.skipped
                                      : fmt::format("failed at gap {} ns: {}", gap, o.error);
            return std::nullopt;
        }
        Trial t = judge(*o.measure, n, gap);
        s.trials.push_back(t);
        if (t.complete && (!s.best || trialRate(t, n) > trialRate(*s.best, n)))
            s.best = t;
        return t;
    };
    auto first = attempt(0);
    if (!first || first->complete || n == 0)
        return s;
    // The unpaced time per call of one thread: a gap of that size about halves the rate.
    std::uint64_t gap = std::max<std::uint64_t>(1000, first->elapsed_ns * threads / n);
    std::uint64_t lo = 0;             // largest gap that lost records
    std::optional<std::uint64_t> hi;  // smallest gap that delivered all
    unsigned paced = 0;
    while (!hi && paced < max_paced) {
        auto t = attempt(gap);
        ++paced;
        if (!t)
            return s;
        if (t->complete)
            hi = gap;
        else
            lo = gap, gap *= 4;
    }
    // Within 20%: finer than the spread of runs under emulation.
    while (hi && paced<max_paced&& * hi * 5> lo * 6) {
        const std::uint64_t mid =
            lo ? static_cast<std::uint64_t>(std::sqrt(static_cast<double>(lo) * *hi)) : *hi / 2;
        if (mid <= lo || mid >= *hi)
            break;
        auto t = attempt(mid);
        ++paced;
        if (!t)
            return s;
        (t->complete ? *hi : lo) = mid;
    }
    return s;
}

double throughputRatio(const ThroughputResult& r, const std::string& peer) {
    const Trial *k = nullptr, *f = nullptr;
    for (const auto& s : r.searches)
        if (s.best && s.tracer == "kernel-record")
            k = &*s.best;
        else if (s.best && s.tracer == peer)
            f = &*s.best;
    return k && f ? trialRate(*k, r.n) / trialRate(*f, r.n) : NAN;
}

void printThroughput(std::ostream& os, const ThroughputResult& r) {
    os << fmt::format(
        "Delivery throughput: the highest rate with every record delivered (syscalls, {} "
        "threads on one kprobe, N = {} per run, ring {} KiB per CPU for each):\n",
        r.threads, r.n, r.ring_kb);
    os << fmt::format("  {:<14} {:>12} {:>9} {:>7}  {}\n", "TRACER", "EVENTS/S", "GAP(ns)", "RUNS",
                      "RUNS: GAP ns -> events/s, what was missing");
    for (const auto& s : r.searches) {
        std::string runs;
        for (const auto& t : s.trials)
            runs +=
                fmt::format("{}{} -> {:.0f}{}", runs.empty() ? "" : "; ", t.gap_ns,
                            trialRate(t, r.n), t.complete ? "" : fmt::format(" ({})", t.shortfall));
        if (!s.error.empty())
            runs += (runs.empty() ? "" : "; ") + s.error;
        if (s.best)
            os << fmt::format("  {:<14} {:>12.0f} {:>9} {:>7}  {}\n", s.tracer,
                              trialRate(*s.best, r.n), s.best->gap_ns, s.trials.size(), runs);
        else
            os << fmt::format("  {:<14} {:>12} {:>9} {:>7}  {}\n", s.tracer, "none", "-",
                              s.trials.size(), runs);
    }
    for (const auto& s : r.searches) {
        if (s.tracer == "kernel-record")
            continue;
        const double v = throughputRatio(r, s.tracer);
        if (std::isnan(v))
            os << fmt::format(
                "  probectl / {}, highest lossless rate: -  aim >= 1.0 (not both "
                "found)\n",
                s.tracer);
        else
            os << fmt::format("  probectl / {}, highest lossless rate: {:.2f}  aim >= 1.0: {}\n",
                              s.tracer, v, v >= 1.0 ? "met" : "NOT met");
    }
    os << "  A GAP is ns each thread spins after every call (0: unpaced). Under emulation\n"
          "  (QEMU TCG, one host thread for every vCPU and the reader) compare the ratio\n"
          "  within one boot only.\n";
}

ThroughputResult throughputBench(const std::string& workload, std::uint64_t n, unsigned ring_kb) {
    ThroughputResult r;
    r.n = n;
    r.ring_kb = ring_kb;
    struct Which {
        const char* name;
        Outcome (*run)(const Workload&, unsigned);
    };
    for (const Which& t :
         {Which{"kernel-record", runKernelRecordRing}, Which{"ftrace-stream", runFtraceStreamRing},
          Which{"ftrace-iterate", runFtraceIterateRing}}) {
        auto one = [&](std::uint64_t gap) {
            Workload w{workload, "syscalls", n, r.threads};
            w.gap_ns = gap;
            return t.run(w, ring_kb);
        };
        r.searches.push_back(searchRate(t.name, one, n, r.threads));
    }
    return r;
}

std::optional<RawPage> parseRawPage(const unsigned char* page, std::size_t size) {
    // struct buffer_data_page on 64-bit: u64 time_stamp, local_t commit (the committed
    // length, bit 31 "events were lost before this page", bit 30 "their count is stored
    // after the data"), then the events.
    constexpr std::size_t kHead = 16;
    constexpr std::uint64_t kMissed = 1ull << 31, kMask = 3ull << 30;
    if (size < kHead)
        return std::nullopt;
    std::uint64_t commit;
    std::memcpy(&commit, page + 8, sizeof(commit));
    RawPage out;
    out.missed = commit & kMissed;
    const std::uint64_t len = commit & ~kMask;
    if (len > size - kHead)
        return std::nullopt;
    const unsigned char* data = page + kHead;
    // Each event: a 32-bit word, type_len in its low 5 bits, time delta in the rest.
    for (std::size_t at = 0; at + 4 <= len;) {
        std::uint32_t head, word1 = 0;
        std::memcpy(&head, data + at, 4);
        if (at + 8 <= len)
            std::memcpy(&word1, data + at + 4, 4);
        const unsigned type_len = head & 31, delta = head >> 5;
        std::uint64_t step;
        if (type_len == 29) {  // padding: to the page's end when its delta is 0
            if (delta == 0)
                break;
            step = 4ull + word1;
        } else if (type_len >= 30) {  // time extend, absolute time stamp
            step = 8;
        } else {  // data: its length in the type, or in the next word (type 0)
            step = type_len ? 4ull + 4ull * type_len : 4ull + word1;
            ++out.events;
        }
        if (step < 8 && type_len == 0)
            return std::nullopt;
        if (at + step > len)
            return std::nullopt;
        at += step;
    }
    return out;
}

}  // namespace probectl::cli::bench
