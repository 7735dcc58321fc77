// probectl bench: ftrace dynamic events through tracefs, the peer built into the kernel.
// "ftrace" is a kprobe_events/uprobe_events probe with the same fetch argument as the
// kernel backend, recording into the trace ring buffer; "floor" is the same probe point
// without arguments while tracing_on is 0: the handler counts the hit (*_profile) and its
// ring-buffer reserve fails at once, so what remains is the probe's own trap and dispatch:
// the cost of a bare probe with an empty handler.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/user_target.hpp"

namespace probectl::cli::bench {

namespace {

constexpr const char* kGroup = "probectl_bench";

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
            (void)writeFile(eventsFile(), fmt::format("-:{}/{}", kGroup, name_), true);
    }
    Result<void> define(const std::string& target, const std::string& args) {
        auto r = writeFile(eventsFile(), fmt::format("p:{}/{} {} {}", kGroup, name_, target, args),
                           true);
        defined_ = r.ok();
        return r;
    }
    Result<void> enable() {
        auto r = writeFile(eventDir() + "/enable", "1", false);
        enabled_ = r.ok();
        return r;
    }
    // Hits from kprobe_profile ("NAME HITS MISSES") or uprobe_profile ("FILE NAME HITS").
    std::optional<std::uint64_t> hits() const {
        std::istringstream in(readFile(fmt::format("{}/{}_profile", root_, kind_)));
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream words(line);
            std::vector<std::string> w;
            for (std::string s; words >> s;)
                w.push_back(s);
            for (std::size_t i = 0; i + 1 < w.size(); ++i)
                if (w[i] == name_ || w[i] == fmt::format("{}/{}", kGroup, name_))
                    return std::stoull(w[i + 1]);
        }
        return std::nullopt;
    }
    std::string eventsFile() const { return fmt::format("{}/{}_events", root_, kind_); }

  private:
    std::string eventDir() const { return fmt::format("{}/events/{}/{}", root_, kGroup, name_); }
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

Outcome runFtrace(const Workload& w, bool floor) {
    const std::string root = tracefs();
    if (root.empty())
        return skip("no tracefs (mount -t tracefs nodev /sys/kernel/tracing)");
    const bool calls = w.mode == "calls";
    const std::string kind = calls ? "uprobe" : "kprobe";
    if (::access(fmt::format("{}/{}_events", root, kind).c_str(), W_OK) != 0)
        return skip(fmt::format("no writable {}/{}_events ({}; needs CONFIG_{}_EVENTS and root)",
                                root, kind, std::strerror(errno), calls ? "UPROBE" : "KPROBE"));
    std::string target = "__x64_sys_getppid";
    if (calls) {
        auto spec = parseProbeSpec(fmt::format("uprobe:{}:bench_fn", w.binary));
        if (!spec)
            return fail(spec.error().render());
        auto t = resolveUserSpec(*spec);
        if (!t)
            return fail(t.error().describe());
        target = fmt::format("{}:{:#x}", t->path, t->file_offset);
    }
    // The kernel backend's fetch argument, in kprobe_events syntax (the same text).
    const std::string args = floor ? "" : (calls ? "x=%di:s64" : "r15=+0(%di):x64");
    DynEvent ev(root, kind, calls ? "bench_fn" : "bench_getppid");
    if (auto r = ev.define(target, args); !r)
        return fail(r.error().describe());
    // Room for every record of the largest run (about 40 bytes each) on one CPU.
    ScopedSetting size(root + "/buffer_size_kb",
                       std::to_string(std::max<std::uint64_t>(1408, w.n * 64 / 1024 + 1024)));
    ScopedSetting on(root + "/tracing_on", floor ? "0" : "1");
    (void)writeFile(root + "/trace", "", false);  // empties the ring buffers
    if (auto r = ev.enable(); !r)
        return fail(r.error().describe());
    const std::uint64_t before = ev.hits().value_or(0);
    const std::string out = tempFile("workload");
    auto st = runToEnd(w.argv(out));
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
        m.records = ringStat(root, "entries");
        m.lost = ringStat(root, "overrun");
    }
    (void)writeFile(root + "/trace", "", false);
    return measured(m);
}

}  // namespace

ScopedSetting::ScopedSetting(std::string path, const std::string& value) : path_(std::move(path)) {
    old_ = readFile(path_);
    while (!old_.empty() && (old_.back() == '\n' || old_.back() == ' '))
        old_.pop_back();
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

}  // namespace probectl::cli::bench
