// probectl bench: what a run prints and writes: the table, the figures, the CSV,
// and the gnuplot script (with its data) drawing overhead per hit for every tracer.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "bench.hpp"
#include "bench_output.hpp"
#include "probectl/text_table.hpp"

namespace probectl::cli::bench {

namespace {

std::string num(double v, int prec = 0) {
    return std::isnan(v) ? "-" : fmt::format("{:.{}f}", v, prec);
}

std::string hitsCell(const Row& r) {
    const auto& m = r.outcome.measure;
    if (!m || !m->hits)
        return "-";
    std::string s = std::to_string(*m->hits);
    if (m->records && *m->records != *m->hits)
        s += fmt::format(" ({} rec)", *m->records);
    return s;
}

double ratio(const std::vector<Row>& rows, const Row& r) {
    const Row* ref = reference(rows, r);
    return ref ? overheadPerHit(r) / overheadPerHit(*ref) : NAN;
}

const Row* find(const std::vector<Row>& rows, const std::string& label, const std::string& tracer) {
    for (const auto& r : rows)
        if (r.tracer == tracer && r.workload.label() == label && r.outcome.measure)
            return &r;
    return nullptr;
}

}  // namespace

void printTable(std::ostream& os, const std::vector<Row>& rows) {
    Table t({{"WORKLOAD"},
             {"TRACER"},
             {"N", Table::Align::Right},
             {"HITS", Table::Align::Right},
             {"EXACT"},
             {"NS/HIT", Table::Align::Right},
             {"OVERHEAD", Table::Align::Right},
             {"X KERNEL", Table::Align::Right}});
    for (const auto& r : rows) {
        if (!r.outcome.measure)
            continue;
        const bool untraced = r.tracer == "untraced";
        t.add({r.workload.label(), r.tracer, std::to_string(r.workload.n), hitsCell(r),
               untraced ? "" : (exactHits(r) ? "yes" : "NO"), num(nsPerHit(r)),
               untraced ? "" : num(overheadPerHit(r)), untraced ? "" : num(ratio(rows, r), 2)});
    }
    t.print(os);
}

void printProblems(std::ostream& os, const std::vector<Row>& rows) {
    for (const auto& r : rows) {
        const std::string where = fmt::format("{} {}", r.workload.label(), r.tracer);
        if (!r.outcome.skipped.empty())
            os << fmt::format("skipped: {}: {}\n", where, r.outcome.skipped);
        else if (!r.outcome.error.empty())
            os << fmt::format("FAILED:  {}: {}\n", where, r.outcome.error);
        else if (!exactHits(r))
            os << fmt::format("INEXACT: {}: saw {} hits{} for {} calls{}\n", where,
                              r.outcome.measure->hits.value_or(0),
                              r.outcome.measure->records
                                  ? fmt::format(", {} records", *r.outcome.measure->records)
                                  : "",
                              r.workload.n,
                              r.outcome.measure->lost ? fmt::format(" ({} lost/missed/overrun)",
                                                                    r.outcome.measure->lost)
                                                      : "");
    }
}

std::vector<Figure> figures(const std::vector<Row>& rows) {
    struct Def {
        const char* name;
        const char* label;
        const char* num;
        const char* den;
        const char* aim;
    };
    static const Def defs[] = {
        {"kernel uprobe record / bare uprobe", "calls/1t", "kernel-record", "floor", "<= 1.2"},
        {"ptrace / kernel, per uprobe hit", "calls/1t", "ptrace", "kernel-record", ">= 20"},
        {"kernel kprobe record / ftrace kprobe_events", "syscalls/1t", "kernel-record", "ftrace",
         "<= 1.0"},
        {"strace / kernel, per traced syscall", "syscalls/1t", "strace", "kernel-record", ""},
        {"kernel kprobe record / ftrace-stream", "syscalls/1t", "kernel-record", "ftrace-stream",
         "<= 1.0"},
        {"kernel uprobe record / ftrace-stream", "calls/1t", "kernel-record", "ftrace-stream",
         "<= 1.0"},
        {"trace text / ftrace trace_pipe, end to end", "syscalls/1t", "trace-text", "ftrace-pipe",
         "<= 1.0"},
        {"trace json / ftrace trace_pipe, end to end", "syscalls/1t", "trace-json", "ftrace-pipe",
         "<= 1.5"},
        {"kernel uprobe aggregate / kernel-count", "calls/1t", "kernel-aggregate", "kernel-count",
         "<= 1.3"},
        {"kernel kprobe aggregate / kernel-count", "syscalls/1t", "kernel-aggregate",
         "kernel-count", "<= 1.3"},
        {"kernel uprobe aggregate / ftrace hist pid", "calls/1t", "kernel-aggregate", "ftrace-hist",
         "<= 1.0"},
        {"kernel kprobe aggregate / ftrace hist pid", "syscalls/1t", "kernel-aggregate",
         "ftrace-hist", "<= 1.0"},
        {"kernel uprobe aggregate / ftrace hist pid,log2", "calls/1t", "kernel-aggregate",
         "ftrace-hist-log2", "<= 1.0"},
        {"kernel kprobe aggregate / ftrace hist pid,log2", "syscalls/1t", "kernel-aggregate",
         "ftrace-hist-log2", "<= 1.0"},
        {"kernel kprobe record + kernel stack / record", "syscalls/1t", "kernel-kstack",
         "kernel-record", ""},
        {"kernel uprobe record + user stack fp / record", "calls/1t", "kernel-ustack",
         "kernel-record", ""},
        {"kernel uprobe record + dwarf stack copy / record", "calls/1t", "kernel-ustack-dwarf",
         "kernel-record", ""},
        {"kernel kprobe record, deferred / ftrace kprobe_events", "syscalls/1t",
         "kernel-record-deferred", "ftrace", "<= 1.0"},
        {"kernel kprobe record / ftrace-iterate", "syscalls/1t", "kernel-record", "ftrace-iterate",
         "<= 1.0"},
        {"kernel uprobe record / ftrace-iterate", "calls/1t", "kernel-record", "ftrace-iterate",
         "<= 1.0"},
    };
    std::vector<Figure> out;
    for (const auto& d : defs) {
        Figure f{d.name, d.label, d.num, d.den, d.aim, NAN, NAN, NAN};
        const Row* a = find(rows, d.label, d.num);
        const Row* b = find(rows, d.label, d.den);
        if (a && b) {
            f.num_ns = overheadPerHit(*a);
            f.den_ns = overheadPerHit(*b);
            // A run no slower than untraced (noise on a busy host) gives no ratio.
            if (f.num_ns > 0 && f.den_ns > 0)
                f.value = f.num_ns / f.den_ns;
        }
        out.push_back(f);
    }
    return out;
}

void printFigures(std::ostream& os, const std::vector<Row>& rows) {
    os << "Figures (overhead per hit over untraced, ns; " << rows.front().workload.n
       << " hits per run):\n";
    for (const auto& f : figures(rows))
        os << fmt::format("  {:<48} {:>8}  ({} {} / {} {}, {}){}\n", f.name, num(f.value, 2),
                          f.num_tracer, num(f.num_ns), f.den_tracer, num(f.den_ns), f.workload,
                          f.aim.empty() ? "" : fmt::format("  aim {}", f.aim));
}

void printEqualWork(std::ostream& os) {
    os << "Equal work (each pair records the same probe, argument and events):\n"
          "  kernel-record  ~ ftrace-iterate records read live, each checked and handed to a "
          "callback, oldest first across CPUs\n"
          "  kernel-record  > ftrace-stream  ftrace-stream's reader only counts each page's "
          "events\n"
          "  kernel-record  > ftrace         ftrace defers reading until the run ends\n"
          "  kernel-record-deferred ~ ftrace both read only after the run\n"
          "  kernel-count   ~ floor          no record (floor: a failed reserve, no count)\n"
          "  trace-text     ~ ftrace-pipe    one text line per event into a file, end to end\n"
          "  trace-json     > ftrace-pipe    JSON Lines carry more fields than ftrace's text\n"
          "  kernel-aggregate ~ ftrace-hist-log2  a count per pid and power of two of the "
          "argument\n"
          "  kernel-aggregate > ftrace-hist  ftrace counts per pid alone\n"
          "  kernel-aggregate > kernel-count kernel-count has no session filter, fetch or map\n"
          "  kernel-*stack*  > kernel-record the same record with a stack added\n";
}

void writeCsv(std::ostream& os, const std::vector<Row>& rows) {
    os << "workload,threads,tracer,n,hits,records,lost,exact,elapsed_ns,ns_per_hit,"
          "overhead_ns_per_hit,ratio_vs_kernel_record,skipped,error\n";
    auto q = [](const std::string& s) {
        std::string o = "\"";
        for (char c : s)
            o += c == '"' ? std::string("\"\"") : std::string(1, c);
        return o + "\"";
    };
    for (const auto& r : rows) {
        const auto& m = r.outcome.measure;
        os << fmt::format(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.workload.mode, r.workload.threads,
            r.tracer, r.workload.n, m && m->hits ? std::to_string(*m->hits) : "",
            m && m->records ? std::to_string(*m->records) : "", m ? std::to_string(m->lost) : "",
            m ? (exactHits(r) ? "yes" : "no") : "", m ? std::to_string(m->elapsed_ns) : "",
            m ? num(nsPerHit(r), 1) : "", m ? num(overheadPerHit(r), 1) : "",
            m ? num(ratio(rows, r), 3) : "", q(r.outcome.skipped), q(r.outcome.error));
    }
}

std::string noTracerRan(const std::vector<Row>& rows) {
    // Reasons in first-seen order, each with the tracers it stopped (once per tracer: the
    // same tracer is skipped on every workload for the same reason).
    std::vector<std::pair<std::string, std::vector<std::string>>> why;
    for (const auto& r : rows) {
        if (r.tracer == "untraced")
            continue;
        if (r.outcome.measure)
            return {};
        const std::string reason = r.outcome.skipped.empty() ? "failed: " + r.outcome.error
                                                             : "skipped: " + r.outcome.skipped;
        auto it =
            std::find_if(why.begin(), why.end(), [&](const auto& w) { return w.first == reason; });
        if (it == why.end())
            it = why.insert(why.end(), {reason, {}});
        if (std::find(it->second.begin(), it->second.end(), r.tracer) == it->second.end())
            it->second.push_back(r.tracer);
    }
    std::string s = "no tracer ran, nothing was measured";
    for (const auto& [reason, names] : why)
        s += fmt::format("\n  {}: {}", fmt::join(names, ", "), reason);
    return s;
}

void writePlot(const std::string& dir, const std::vector<Row>& rows, const std::string& title) {
    // bench.dat: one line per tracer, one column per workload, overhead ns per hit ("?"
    // where it did not run or was not above zero: the y axis is logarithmic).
    std::vector<std::string> labels, names;
    for (const auto& r : rows) {
        if (std::find(labels.begin(), labels.end(), r.workload.label()) == labels.end())
            labels.push_back(r.workload.label());
        if (r.tracer != "untraced" &&
            std::find(names.begin(), names.end(), r.tracer) == names.end())
            names.push_back(r.tracer);
    }
    std::ofstream dat(dir + "/bench.dat");
    dat << "tracer";
    for (const auto& l : labels)
        dat << ' ' << l;
    dat << '\n';
    for (const auto& n : names) {
        dat << n;
        for (const auto& l : labels) {
            const Row* r = find(rows, l, n);
            const double v = r ? overheadPerHit(*r) : NAN;
            dat << ' ' << (std::isnan(v) || v <= 0 ? std::string("?") : num(v, 1));
        }
        dat << '\n';
    }
    std::ofstream gp(dir + "/bench.gp");
    gp << "# gnuplot bench.gp (in this folder) draws bench.png and bench.svg from bench.dat\n"
       << "set title \"" << title << "\" noenhanced\n"
       << "set ylabel 'overhead per hit over untraced (ns, log scale)'\n"
       << "set logscale y\nset grid ytics\nset key top left noenhanced\n"
       << "set style data histograms\nset style histogram clustered gap 1\n"
       << "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset datafile missing '?'\n"
       << "set xtics noenhanced rotate by -25\n"
       << "set terminal png size 1200,650\nset output 'bench.png'\n"
       << "plot for [c=2:" << labels.size() + 1
       << "] 'bench.dat' using c:xtic(1) title columnheader(c)\n"
       << "set terminal svg size 1200,650\nset output 'bench.svg'\nreplot\n";
}

// gnuplot creates bench.png before it finds it has nothing to draw: a failed run's images
// are removed.
std::string drawPlot(const std::string& dir) {
    if (findInPath("gnuplot").empty())
        return "bench.gp (no gnuplot here: run 'gnuplot bench.gp' in that folder)";
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir);
    auto st = runToEnd({"gnuplot", "bench.gp"});
    std::filesystem::current_path(cwd);
    std::error_code ec;
    bool drawn = st && *st == 0;
    for (const char* image : {"/bench.png", "/bench.svg"})
        drawn = drawn && std::filesystem::file_size(dir + image, ec) > 0 && !ec;
    if (drawn)
        return "bench.png, bench.svg";
    for (const char* image : {"/bench.png", "/bench.svg"})
        std::filesystem::remove(dir + image, ec);
    return "bench.gp (gnuplot failed: run 'gnuplot bench.gp' in that folder to see why)";
}

}  // namespace probectl::cli::bench
