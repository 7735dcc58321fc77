#include "attach.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/expand.hpp"

namespace probectl::cli {

std::string attachSummary(const AttachReport& r, bool max_entries) {
    // The limits the names were refused for, from the reasons SpecExpander gives them
    // ("over the module's max_map_kb limit"): -v alone named them, per name.
    constexpr std::string_view head = "over the module's ", tail = " limit";
    std::set<std::string> limits;
    for (const SkippedName& n : r.skipped)
        if (n.reason.starts_with(head) && n.reason.ends_with(tail) &&
            n.reason.size() > head.size() + tail.size())
            limits.insert(
                n.reason.substr(head.size(), n.reason.size() - head.size() - tail.size()));
    std::string s = r.summary();
    if (limits.empty())
        return s;
    std::vector<std::string> what;
    for (const std::string& name : limits) {
        std::string w = fmt::format(
            "raise the module parameter {} (echo N > /sys/module/probectl/parameters/{})", name,
            name);
        if (name == "max_map_kb")
            w += max_entries ? " or lower --max-entries (each probe's map)" : "";
        else if (name == "max_probes")
            w += " or narrow the glob";
        what.push_back(std::move(w));
    }
    return s + fmt::format("; to attach more: {}", fmt::join(what, "; "));
}

Result<std::size_t> attachSpecs(Tracer& tracer, const std::vector<ProbeSpec>& specs, pid_t pid,
                                bool verbose, std::ostream& err, bool max_entries,
                                const std::function<bool()>& stop,
                                std::shared_ptr<UserResolveCache> cache) {
    // A spec given again word for word (arguments and predicate too) is added once, and said
    // once: 300 copies once gave 299 identical notes, and every hit 300 times.
    std::map<std::string, std::size_t> given;
    for (const ProbeSpec& spec : specs)
        ++given[spec.str()];
    std::set<std::string> added;
    SpecExpander expander(pid, nullptr, std::move(cache));
    if (stop)
        expander.stopWhen(stop);
    std::size_t n = 0;
    bool stopped = false;
    for (const ProbeSpec& spec : specs) {
        if (stop && stop()) {
            stopped = true;
            break;
        }
        const std::string key = spec.str();
        if (!added.insert(key).second)
            continue;
        if (const std::size_t times = given[key]; times > 1)
            err << fmt::format("probectl: note: {} given {} times; traced once\n",
                               spec.text.empty() ? key : spec.text, times);
        auto r = expander.attach(tracer, spec);
        if (!r) {
            // -v lists what a glob refused also when it refused everything.
            if (verbose)
                err << expander.failedDetails();
            Error e = std::move(r).error();
            // The maps' size is the user's too: said where the refusal is the whole answer.
            if (max_entries && e.message.find("(limit: max_map_kb)") != std::string::npos)
                e.message += "; or lower --max-entries (each probe's map)";
            return e;
        }
        n += r->ids.size();
        for (const std::string& note : r->notes)
            err << "probectl: note: " << note << '\n';
        stopped = r->stopped;
        if (r->glob) {
            err << attachSummary(*r, max_entries) << '\n';
            if (verbose)
                err << r->details();
        }
        if (stopped)
            break;
    }
    if (stopped)
        err << fmt::format(
            "probectl: note: a stop signal ended the attaching: {} probe{} "
            "attached\n",
            n, n == 1 ? "" : "s");
    return n;
}

}  // namespace probectl::cli
