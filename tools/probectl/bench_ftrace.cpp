// probectl bench: ftrace dynamic events through tracefs, the peer built into the kernel.
// "ftrace" is a kprobe_events/uprobe_events probe with the same fetch argument as the
// kernel backend, recording into the trace ring buffer; "floor" is the same probe point
// without arguments while tracing_on is 0: the handler counts the hit (*_profile) and its
// ring-buffer reserve fails at once, so what remains is the probe's own trap and dispatch:
// the cost of a bare probe with an empty handler. "ftrace" leaves the records in the ring
// until the run ends (deferred); "ftrace-stream" reads every CPU's trace_pipe_raw during the
// run, as trace-cmd does, counting each page's events; "ftrace-iterate" reads them live
// with libtracefs, each event parsed and handed to a callback oldest first across CPUs
// (bench_tracefs.cpp), the work probectl's live delivery does; "ftrace-pipe" is
// the text reader of trace_pipe (the kernel formats each line) writing to a file, timed
// end to end like `probectl trace -o FILE` (bench_e2e.cpp).
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <variant>

#include "bench.hpp"
#include "bench_throughput.hpp"
#include "bench_tracefs.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/user_target.hpp"

namespace probectl::cli::bench {

namespace {

constexpr const char* kFtraceGroup = "probectl_bench";

std::string tracefs() {
    for (const char* d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
        if (::access((std::string(d) + "/trace").c_str(), F_OK) == 0)
            return d;
    return {};
}

// Writes `text` to a tracefs file; errno and the file name on failure.
Result<void> writeFile(const std::string& path, const std::string& text, bool append) {
    const int fd = ::open(path.c_str(), O_WRONLY | (append ? O_APPEND : O_TRUNC));
    if (fd < 0)
        return makeError(errno, path);
    const ssize_t n = ::write(fd, text.data(), text.size());
    const int e = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(text.size()))
        return makeError(n < 0 ? e : EIO, fmt::format("{}: writing '{}'", path, text));
    return {};
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// One dynamic event, removed (disabled first) on destruction.
class DynEvent {
  public:
    DynEvent(std::string root, std::string kind, std::string name)
        : root_(std::move(root)), kind_(std::move(kind)), name_(std::move(name)) {}
    ~DynEvent() {
        if (enabled_)
            (void)writeFile(eventDir() + "/enable", "0", false);
        if (defined_)
            (void)writeFile(eventsFile(), fmt::format("-:{}/{}", kFtraceGroup, name_), true);
    }
    Result<void> define(const std::string& target, const std::string& args) {
        auto r = writeFile(eventsFile(),
                           fmt::format("p:{}/{} {} {}", kFtraceGroup, name_, target, args), true);
        defined_ = r.ok();
        return r;
    }
    Result<void> enable() {
        auto r = writeFile(eventDir() + "/enable", "1", false);
        enabled_ = r.ok();
        return r;
    }
    // Hits from kprobe_profile ("NAME HITS MISSES") or uprobe_profile ("FILE NAME HITS").
    std::optional<std::uint64_t> hits() const { return profile(1); }
    // A kprobe's misses (hits its handler skipped, nested in another kprobe).
    std::optional<std::uint64_t> misses() const {
        return kind_ == "kprobe" ? profile(2) : std::nullopt;
    }
    std::string eventsFile() const { return fmt::format("{}/{}_events", root_, kind_); }

  private:
    // The column `col` after the event's name in its *_profile line.
    std::optional<std::uint64_t> profile(std::size_t col) const {
        std::istringstream in(readFile(fmt::format("{}/{}_profile", root_, kind_)));
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream words(line);
            std::vector<std::string> w;
            for (std::string s; words >> s;)
                w.push_back(s);
            for (std::size_t i = 0; i + col < w.size(); ++i)
                if (w[i] == name_ || w[i] == fmt::format("{}/{}", kFtraceGroup, name_))
                    return std::stoull(w[i + col]);
        }
        return std::nullopt;
    }
    std::string eventDir() const {
        return fmt::format("{}/events/{}/{}", root_, kFtraceGroup, name_);
    }
    std::string root_, kind_, name_;
    bool defined_ = false, enabled_ = false;
};

// Sum of one field ("entries", "overrun") of every per_cpu/cpuN/stats file.
std::uint64_t ringStat(const std::string& root, const std::string& field) {
    std::uint64_t sum = 0;
    std::error_code ec;
    for (const auto& cpu : std::filesystem::directory_iterator(root + "/per_cpu", ec)) {
        std::istringstream in(readFile(cpu.path().string() + "/stats"));
        std::string line;
        while (std::getline(in, line))
            if (line.rfind(field + ":", 0) == 0)
                sum += std::stoull(line.substr(field.size() + 1));
    }
    return sum;
}

enum class Reader { None, Raw, Pipe, Iterate };

// Readers of the ring while the workload runs: one thread per CPU on trace_pipe_raw
// (each page's events counted, then discarded), or one on trace_pipe copying the text to
// `out_fd`. Each polls and stops once told to and nothing is left to read.
class Readers {
  public:
    Readers(const std::string& root, Reader how, int out_fd) : root_(root) {
        if (how == Reader::Pipe) {
            start(root + "/trace_pipe", out_fd);
            return;
        }
        std::error_code ec;
        for (const auto& cpu : std::filesystem::directory_iterator(root + "/per_cpu", ec))
            start(cpu.path().string() + "/trace_pipe_raw", -1);
    }
    ~Readers() { stop(); }
    void stop() {
        stop_ = true;
        for (auto& t : threads_)
            if (t.joinable())
                t.join();
    }
    std::uint64_t lines() const { return lines_; }
    // trace_pipe_raw: data events in the pages read, and pages that said events were lost
    // before them (or could not be parsed).
    std::uint64_t events() const { return events_; }
    std::uint64_t missedPages() const { return missed_; }
    bool ok() const { return !threads_.empty() && !failed_; }

  private:
    void start(const std::string& path, int out_fd) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            failed_ = true;
            return;
        }
        // A read of trace_pipe_raw returns at most one sub-buffer (a page unless
        // buffer_subbuf_size_kb says otherwise): read whole ones, so each starts with its
        // header.
        std::size_t size = 65536;
        if (out_fd < 0) {
            const std::string kb = readFile(root_ + "/buffer_subbuf_size_kb");
            size = kb.empty() ? 4096 : std::stoul(kb) * 1024;
        }
        threads_.emplace_back([this, fd, out_fd, size] {
            std::vector<char> buf(size);
            for (;;) {
                const ssize_t n = ::read(fd, buf.data(), buf.size());
                if (n > 0) {
                    if (out_fd < 0) {
                        auto page = parseRawPage(reinterpret_cast<unsigned char*>(buf.data()),
                                                 static_cast<std::size_t>(n));
                        events_ += page ? page->events : 0;
                        missed_ += !page || page->missed;
                    } else {
                        lines_ += static_cast<std::uint64_t>(
                            std::count(buf.data(), buf.data() + n, '\n'));
                        (void)!::write(out_fd, buf.data(), static_cast<std::size_t>(n));
                    }
                    continue;
                }
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                    break;
                if (stop_)
                    break;
                pollfd p{fd, POLLIN, 0};
                (void)::poll(&p, 1, 10);
            }
            ::close(fd);
        });
    }
    std::string root_;
    std::vector<std::thread> threads_;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> lines_{0}, events_{0}, missed_{0};
    bool failed_ = false;
};

std::uint64_t nowNs() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

// Where the workload's probe goes in kprobe_events/uprobe_events terms.
struct Point {
    std::string root, kind, target, name;
    bool calls = false;
};

// The probe point of `w` for tracefs, or the outcome saying why there is none.
std::variant<Point, Outcome> point(const Workload& w) {
    Point p;
    p.root = tracefs();
    if (p.root.empty())
        return skip("no tracefs (mount -t tracefs nodev /sys/kernel/tracing)");
    p.calls = w.mode == "calls";
    p.kind = p.calls ? "uprobe" : "kprobe";
    p.name = p.calls ? "bench_fn" : "bench_getppid";
    if (::access(fmt::format("{}/{}_events", p.root, p.kind).c_str(), W_OK) != 0)
        return skip(fmt::format("no writable {}/{}_events ({}; needs CONFIG_{}_EVENTS and root)",
                                p.root, p.kind, std::strerror(errno),
                                p.calls ? "UPROBE" : "KPROBE"));
    p.target = "__x64_sys_getppid";
    if (p.calls) {
        auto spec = parseProbeSpec(fmt::format("uprobe:{}:bench_fn", w.binary));
        if (!spec)
            return fail(spec.error().render());
        auto t = resolveUserSpec(*spec);
        if (!t)
            return fail(t.error().describe());
        p.target = fmt::format("{}:{:#x}", t->path, t->file_offset);
    }
    return p;
}

// The kernel backend's fetch argument, in kprobe_events syntax (the same text), and its name.
const char* fetchArg(const Point& p) {
    return p.calls ? "x=%di:s64" : "r15=+0(%di):x64";
}
const char* fetchName(const Point& p) {
    return p.calls ? "x" : "r15";
}

// `ring_kb`: buffer_size_kb for the run instead of room for every record (the throughput
// search's fixed ring).
Outcome runFtrace(const Workload& w, bool floor, Reader reader = Reader::None,
                  unsigned ring_kb = 0) {
    auto pt = point(w);
    if (auto* o = std::get_if<Outcome>(&pt))
        return *o;
    const Point& p = std::get<Point>(pt);
    const std::string& root = p.root;
    const bool calls = p.calls;
    DynEvent ev(root, p.kind, p.name);
    if (auto r = ev.define(p.target, floor ? "" : fetchArg(p)); !r)
        return fail(r.error().describe());
    // Room for every record of the largest run (about 40 bytes each) on one CPU.
    ScopedSetting size(
        root + "/buffer_size_kb",
        std::to_string(ring_kb ? ring_kb : std::max<std::uint64_t>(1408, w.n * 64 / 1024 + 1024)));
    if (ring_kb && !size.ok())
        return fail(fmt::format("cannot set {}/buffer_size_kb to {}", root, ring_kb));
    ScopedSetting on(root + "/tracing_on", floor ? "0" : "1");
    (void)writeFile(root + "/trace", "", false);  // empties the ring buffers
    if (auto r = ev.enable(); !r)
        return fail(r.error().describe());
    const std::uint64_t before = ev.hits().value_or(0);
    const std::uint64_t misses_before = ev.misses().value_or(0);
    std::string text;
    int text_fd = -1;
    if (reader == Reader::Pipe) {
        text = tempFile("trace_pipe");
        text_fd = ::open(text.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (text_fd < 0)
            return fail(fmt::format("{}: {}", text, std::strerror(errno)));
    }
    std::optional<Readers> readers;
    std::unique_ptr<TracefsReader> lib;
    if (reader == Reader::Iterate) {
        auto r = TracefsReader::open(root, kFtraceGroup, p.name, fetchName(p));
        if (!r)
            return skip(r.error().describe());
        lib = std::move(*r);
        lib->start();
    } else if (reader != Reader::None) {
        readers.emplace(root, reader, text_fd);
        if (!readers->ok())
            return skip(
                fmt::format("cannot read {}/{}", root,
                            reader == Reader::Pipe ? "trace_pipe" : "per_cpu/cpu*/trace_pipe_raw"));
    }
    const std::string out = tempFile("workload");
    const std::uint64_t t0 = nowNs();
    auto st = runToEnd(w.argv(out));
    // The text reader's run ends when its file holds every line (or nothing came for 2 s).
    std::uint64_t t1 = nowNs();
    if (reader == Reader::Pipe) {
        std::uint64_t seen = readers->lines(), idle_since = t1;
        while (seen < w.n && nowNs() - idle_since < 2000000000ull) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            if (readers->lines() != seen) {
                seen = readers->lines();
                idle_since = t1 = nowNs();
            }
        }
        t1 = std::max(t1, seen >= w.n ? nowNs() : t1);
    }
    if (readers)
        readers->stop();
    if (lib)
        lib->stop();
    if (text_fd >= 0)
        ::close(text_fd);
    if (!st)
        return fail(st.error().describe());
    if (*st != 0)
        return fail(fmt::format("workload wait status {}", *st));
    auto ns = readElapsed(out);
    std::filesystem::remove(out);
    if (!ns)
        return fail(ns.error().describe());
    Measure m;
    m.elapsed_ns = *ns;
    if (auto h = ev.hits())
        m.hits = *h - before;
    if (!floor) {
        const std::uint64_t overrun = ringStat(root, "overrun"),
                            dropped = ringStat(root, "dropped events"),
                            missed = ev.misses().value_or(0) - misses_before;
        m.lost = overrun + dropped + missed;
        m.lost_detail = fmt::format("overrun {}, dropped {}, missed {}", overrun, dropped, missed);
        if (reader == Reader::None)
            m.records = ringStat(root, "entries");
        if (reader == Reader::Raw) {
            m.records = readers->events();
            m.lost += readers->missedPages();
            m.lost_detail += fmt::format(", pages after a loss {}", readers->missedPages());
        }
        if (reader == Reader::Iterate) {
            m.records = lib->events();
            m.lost += lib->missed();
            m.lost_detail += fmt::format(", events after a loss {}", lib->missed());
        }
    }
    if (reader == Reader::Pipe) {
        m.records = countLines(text, calls ? "bench_fn:" : "bench_getppid:");
        std::filesystem::remove(text);
        m.wall_ns = t1 - t0;
    }
    (void)writeFile(root + "/trace", "", false);
    return measured(m);
}

// A hist trigger on an event, removed on destruction (before the event: an event with a
// trigger cannot be removed).
class HistTrigger {
  public:
    HistTrigger(std::string file, std::string text)
        : file_(std::move(file)), text_(std::move(text)) {}
    ~HistTrigger() {
        if (set_)
            (void)writeFile(file_, "!" + text_, true);
    }
    Result<void> set() {
        auto r = writeFile(file_, text_, true);
        set_ = r.ok();
        return r;
    }

  private:
    std::string file_, text_;
    bool set_ = false;
};

// ftrace's hist trigger on the same probe with the same fetch argument, keyed by
// common_pid, and with `log2` also by the argument's log2 (one entry per pid and power of
// two: kernel-aggregate's histogram). The event is not enabled: the trigger soft-enables
// it, so each hit is built in a per-CPU scratch buffer, given to the trigger and
// discarded; nothing reaches the ring. Hits are the hist file's "Hits:" total, records
// the sum of its entries' hitcount.
Outcome runFtraceHist(const Workload& w, bool log2) {
    auto pt = point(w);
    if (auto* o = std::get_if<Outcome>(&pt))
        return *o;
    const Point& p = std::get<Point>(pt);
    DynEvent ev(p.root, p.kind, p.name);
    if (auto r = ev.define(p.target, fetchArg(p)); !r)
        return fail(r.error().describe());
    const std::string dir = fmt::format("{}/events/{}/{}", p.root, kFtraceGroup, p.name);
    HistTrigger trigger(dir + "/trigger",
                        log2 ? fmt::format("hist:keys=common_pid,{}.log2", fetchName(p))
                             : std::string("hist:keys=common_pid"));
    if (auto r = trigger.set(); !r)
        return skip(
            fmt::format("no hist trigger ({}; needs CONFIG_HIST_TRIGGERS)", r.error().describe()));
    const std::uint64_t before = ev.hits().value_or(0);
    Outcome o = timed({}, w);
    if (!o.measure)
        return o;
    Measure& m = *o.measure;
    auto h = parseHist(readFile(dir + "/hist"));
    if (!h)
        return fail(fmt::format("{}/hist: {}", dir, h.error().describe()));
    m.records = h->hitcount;
    m.lost = h->dropped;
    if (auto k = ev.hits())
        m.hits = *k - before;
    return o;
}

}  // namespace

Result<HistTotals> parseHist(const std::string& text) {
    HistTotals t;
    bool totals = false;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::size_t at = line.find("hitcount:");
        if (at != std::string::npos && line.find('{') != std::string::npos)
            t.hitcount += std::stoull(line.substr(at + 9));
        auto field = [&](const char* name, std::uint64_t& v) {
            const std::string key = fmt::format("{}:", name);
            at = line.find(key);
            if (at != std::string::npos && line.find('{') == std::string::npos) {
                v = std::stoull(line.substr(at + key.size()));
                return true;
            }
            return false;
        };
        totals |= field("Hits", t.hits);
        (void)field("Entries", t.entries);
        (void)field("Dropped", t.dropped);
    }
    if (!totals)
        return makeError(EBADMSG, "no 'Hits:' total in the hist file");
    return t;
}

ScopedSetting::ScopedSetting(std::string path, const std::string& value) : path_(std::move(path)) {
    old_ = readFile(path_);
    while (!old_.empty() && (old_.back() == '\n' || old_.back() == ' '))
        old_.pop_back();
    // buffer_size_kb before tracing first used the buffer reads "7 (expanded: 1408)": the
    // size it will have, the only value that can be written back.
    if (const auto at = old_.find("(expanded: "); at != std::string::npos)
        old_ = old_.substr(at + 11, old_.find(')', at) - at - 11);
    ok_ = writeFile(path_, value, false).ok();
}

ScopedSetting::~ScopedSetting() {
    if (ok_ && !old_.empty())
        (void)writeFile(path_, old_, false);
}

std::string ScopedSetting::current(const std::string& path) {
    return readFile(path);
}

Outcome runFtraceFloor(const Workload& w) {
    return runFtrace(w, true);
}

Outcome runFtraceRecord(const Workload& w) {
    return runFtrace(w, false);
}

Outcome runFtraceHistPid(const Workload& w) {
    return runFtraceHist(w, false);
}

Outcome runFtraceHistLog2(const Workload& w) {
    return runFtraceHist(w, true);
}

Outcome runFtraceStream(const Workload& w) {
    return runFtrace(w, false, Reader::Raw);
}

Outcome runFtraceIterate(const Workload& w) {
    return runFtrace(w, false, Reader::Iterate);
}

Outcome runFtraceStreamRing(const Workload& w, unsigned ring_kb) {
    return runFtrace(w, false, Reader::Raw, ring_kb);
}

Outcome runFtraceIterateRing(const Workload& w, unsigned ring_kb) {
    return runFtrace(w, false, Reader::Iterate, ring_kb);
}

namespace {
Outcome ftracePipe(const Workload& w) {
    return runFtrace(w, false, Reader::Pipe);
}
}  // namespace

Outcome runFtracePipe(const Workload& w) {
    return lessStartUp(ftracePipe, w);
}

}  // namespace probectl::cli::bench
