// probectl bench: the standard workloads untraced and under every tracer available here,
// side by side. The tracers are in bench_kernel.cpp, bench_ftrace.cpp and
// bench_peers.cpp; the report in bench_output.cpp.
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench.hpp"
#include "bench_output.hpp"
#include "bench_throughput.hpp"
#include "subcommands.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {

constexpr const char* kBenchCmd = "bench";

std::string tracerNames() {
    std::string s;
    for (const auto& t : bench::tracers())
        if (t.name != "untraced")
            s += (s.empty() ? "" : ",") + t.name;
    return s;
}

// -n and --throughput: calls per run.
constexpr std::uint64_t kMaxCount = 100000000;

}  // namespace

po::options_description benchOptionsDescription(BenchOptions* o) {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("count,n", bounded<std::uint64_t>(o ? &o->count : nullptr, "count", 1, kMaxCount)
             ->value_name("N"),
         "calls (calls workload) or getppid syscalls (syscalls workload) per run "
         "(default 10000)")
        ("threads", bounded<unsigned>(o ? &o->threads : nullptr, "threads", 1, 64)->value_name("T"),
         "threads of the multithreaded variant, 2..64 (default 4); 1 runs single-threaded "
         "workloads only")
        ("repeat", bounded<unsigned>(o ? &o->repeat : nullptr, "repeat", 1, 100)->value_name("R"),
         "runs per table cell; the run with the median time is reported (default 1)")
        ("tracers", po::value<std::vector<std::string>>()->multitoken()->value_name("LIST"),
         ("only these tracers, comma-separated (untraced always runs): " + tracerNames())
             .c_str())
        ("workload", po::value<std::string>(o ? &o->workload : nullptr)->value_name("PATH"),
         "the bench_workload program (default: the one this build made, else the installed one)")
        ("output-dir,o", po::value<std::string>(o ? &o->out_dir : nullptr)->value_name("DIR"),
         "where bench.csv, bench.dat, bench.gp, bench.png and bench.svg go "
         "(default ./probectl-bench)")
        ("no-plot", "write bench.gp but do not run gnuplot")
        ("attach", po::value<std::size_t>(o ? &o->attach : nullptr)->value_name("N"),
         fmt::format("also time attaching and detaching N kprobes at once, probectl against "
                     "ftrace's kprobe_events (0..{}, the probes one session may hold; default "
                     "1000; 0 skips it)", bench::kAttachMax).c_str())
        ("startup", po::value<unsigned>(o ? &o->startup : nullptr)->value_name("R"),
         "also time whole commands around one getppid call, probectl trace against strace "
         "and the program alone, R runs each, median (default 5; 0 skips it)")
        ("throughput", bounded<std::uint64_t>(o ? &o->throughput : nullptr, "throughput", 0,
                                             kMaxCount, "records per run")
             ->value_name("N"),
         "also find the highest rate at which probectl.ko (kernel-record) and ftrace "
         "(ftrace-stream, ftrace-iterate) deliver all N records of 4 threads calling getppid "
         "with none lost, "
         "pacing the threads when unpaced runs lose some (up to 9 runs each; default 0: "
         "skipped)")
        ("throughput-ring", bounded<unsigned>(o ? &o->ring_kb : nullptr, "throughput-ring", 8,
                                              65536, "KiB")
             ->value_name("KB"),
         "the ring per CPU of each in that search, KiB, 8..65536 (default 64)");
    // clang-format on
    return d;
}

Parsed<BenchOptions> parseBenchOptions(const std::vector<std::string>& args) {
    BenchOptions o;
    auto desc = benchOptionsDescription(&o);
    po::variables_map vm;
    auto r = parsePositionals(args, desc, "unexpected", "argument", vm);
    if (!r)
        return std::move(r).error();
    o.help = r->help;
    if (o.help)
        return o;
    if (!r->values.empty())
        return UsageError{fmt::format("unexpected argument '{}'", r->values.front())};
    if (o.attach > bench::kAttachMax)
        return UsageError{fmt::format(
            "--attach must be 0..{}: one probectl session holds at most {} probes (probectl.ko's "
            "default max_probes), so more would time its refusals against ftrace's probes",
            bench::kAttachMax, bench::kAttachMax)};
    if (auto e =
            emptyOutputError(vm, "output-dir", "a directory name", "write to ./probectl-bench"))
        return *e;
    if (vm.count("tracers")) {
        for (const auto& arg : vm["tracers"].as<std::vector<std::string>>()) {
            // Every name, empty ones included: "" or "a," is a mistake, not "all of them".
            std::size_t at = 0;
            while (at <= arg.size()) {
                const std::size_t comma = std::min(arg.find(',', at), arg.size());
                const std::string name = arg.substr(at, comma - at);
                const auto& all = bench::tracers();
                if (name.empty() ||
                    std::none_of(all.begin(), all.end(),
                                 [&](const bench::Tracer& t) { return t.name == name; }))
                    return UsageError{fmt::format(
                        "--tracers '{}': {} (known: {}; leave --tracers out for all)", arg,
                        name.empty() ? std::string("empty tracer name")
                                     : fmt::format("unknown tracer '{}'", name),
                        tracerNames())};
                if (name != "untraced")  // it always runs
                    o.only.push_back(name);
                at = comma + 1;
            }
        }
        if (o.only.empty())
            return UsageError{fmt::format(
                "--tracers: no tracer to compare with untraced, which always runs (known: {})",
                tracerNames())};
    }
    o.plot = !vm.count("no-plot");
    if (o.workload.empty())
        o.workload = ::access(PROBECTL_BENCH_WORKLOAD, X_OK) == 0
                         ? PROBECTL_BENCH_WORKLOAD
                         : PROBECTL_BENCH_WORKLOAD_INSTALLED;
    return o;
}

namespace {

// The run with the median elapsed time of `repeat` runs (an error or skip ends early).
bench::Outcome median(const bench::Tracer& t, const bench::Workload& w, unsigned repeat) {
    std::vector<bench::Outcome> runs;
    for (unsigned i = 0; i < repeat; ++i) {
        bench::Outcome o = t.run(w);
        if (!o.measure)
            return o;
        runs.push_back(std::move(o));
    }
    // Times sorted with their run's index: sorting the outcomes themselves moves strings
    // through a temporary GCC 12 then takes for uninitialized.
    std::vector<std::pair<std::uint64_t, std::size_t>> order;
    for (std::size_t i = 0; i < runs.size(); ++i)
        order.emplace_back(runs[i].measure->elapsed_ns, i);
    std::sort(order.begin(), order.end());
    return runs[order[order.size() / 2].second];
}

std::string machine() {
    struct utsname u {};
    ::uname(&u);
    std::string cpu;
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) {
            cpu = line.substr(line.find(':') + 2);
            break;
        }
    return fmt::format("Linux {} {}, {} CPUs ({})", u.release, u.machine,
                       std::thread::hardware_concurrency(), cpu);
}

}  // namespace

int runBench(const std::vector<std::string>& args, Io& io) {
    auto o = parseBenchOptions(args);
    if (auto rc = parsedExit(io, kBenchCmd, o))
        return *rc;
    if (::access(o->workload.c_str(), X_OK) != 0)
        return runtimeError(io, kBenchCmd,
                            makeError(errno, fmt::format("workload {}: not an executable "
                                                         "(--workload PATH)",
                                                         o->workload)));
    std::error_code ec;
    std::filesystem::create_directories(o->out_dir, ec);
    if (ec)
        return runtimeError(io, kBenchCmd, makeError(ec.value(), o->out_dir));

    const auto workloads = bench::standardWorkloads(o->workload, o->count, o->threads);
    const std::string where = machine();
    io.out << fmt::format("probectl bench: N = {} hits per run, {} run{} per cell, on {}\n",
                          o->count, o->repeat, o->repeat == 1 ? "" : "s", where);
    io.out.flush();

    std::vector<bench::Row> rows;
    for (const auto& w : workloads) {
        std::uint64_t untraced = 0;
        for (const auto& t : bench::tracers()) {
            const bool wanted = t.name == "untraced" || o->only.empty() ||
                                std::count(o->only.begin(), o->only.end(), t.name);
            if (!wanted || (w.mode == "calls" ? !t.for_calls : !t.for_syscalls))
                continue;
            io.err << fmt::format("  {} {} ...\n", w.label(), t.name);
            io.err.flush();
            bench::Row r{w, t.name, median(t, w, o->repeat), untraced};
            if (t.name == "untraced") {
                if (!r.outcome.measure) {
                    bench::removeTempDir();
                    return runtimeError(io, kBenchCmd,
                                        makeError(EIO, fmt::format("untraced {} run failed: {}",
                                                                   w.label(), r.outcome.error)));
                }
                untraced = r.untraced_ns = r.outcome.measure->elapsed_ns;
            }
            rows.push_back(std::move(r));
        }
    }
    std::vector<bench::StartupTimes> startup;
    if (o->startup) {
        io.err << fmt::format("  start-up, {} runs each ...\n", o->startup);
        io.err.flush();
        startup = bench::startupBench(o->workload, o->startup);
    }
    std::optional<bench::ThroughputResult> throughput;
    if (o->throughput) {
        io.err << fmt::format("  delivery throughput, N = {}, ring {} KiB ...\n", o->throughput,
                              o->ring_kb);
        io.err.flush();
        throughput = bench::throughputBench(o->workload, o->throughput, o->ring_kb);
    }
    bench::removeTempDir();
    std::vector<bench::AttachTimes> attach;
    if (o->attach) {
        io.err << fmt::format("  attach and detach {} kprobes ...\n", o->attach);
        io.err.flush();
        attach = bench::attachBench(o->attach);
    }

    io.out << '\n';
    bench::printTable(io.out, rows);
    io.out << '\n';
    bench::printProblems(io.out, rows);
    io.out << '\n';
    bench::printFigures(io.out, rows);
    io.out << '\n';
    bench::printEqualWork(io.out);
    if (!attach.empty()) {
        io.out << '\n';
        bench::printAttach(io.out, attach);
    }
    if (!startup.empty()) {
        io.out << '\n';
        bench::printStartup(io.out, startup);
    }
    if (throughput) {
        io.out << '\n';
        bench::printThroughput(io.out, *throughput);
    }
    io.out << "\nLegend:\n";
    for (const auto& t : bench::tracers())
        io.out << fmt::format("  {:<17} {}\n", t.name, t.what);
    io.out << "  NS/HIT is the workload's loop time / N; OVERHEAD subtracts the untraced time;\n"
              "  X KERNEL divides OVERHEAD by kernel-record's on the same workload.\n"
              "  End-to-end rows (trace-*, ftrace-pipe) count wall time less start-up as\n"
              "  their time, so their OVERHEAD includes writing every event out.\n";

    std::ofstream csv(o->out_dir + "/bench.csv");
    bench::writeCsv(csv, rows);
    csv.close();
    bench::writePlot(o->out_dir, rows, fmt::format("probectl bench, N={}: {}", o->count, where));
    const std::string none_ran = bench::noTracerRan(rows);
    std::string plotted = "bench.gp (gnuplot not run)";
    if (!none_ran.empty())
        plotted = "bench.gp (nothing to plot)";
    else if (o->plot)
        plotted = bench::drawPlot(o->out_dir);
    io.out << fmt::format("\nWrote {}/: bench.csv, bench.dat, {}\n", o->out_dir, plotted);
    if (!none_ran.empty())
        return runtimeError(io, kBenchCmd, makeError(0, none_ran));
    return kExitOk;
}

}  // namespace probectl::cli
