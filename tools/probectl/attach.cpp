#include "attach.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>

#include "probectl/expand.hpp"

namespace probectl::cli {

Result<std::size_t> attachSpecs(Tracer& tracer, const std::vector<ProbeSpec>& specs, pid_t pid,
                                bool verbose, std::ostream& err) {
    // A spec given again word for word (arguments and predicate too) is added once, and said
    // once: 300 copies once gave 299 identical notes, and every hit 300 times.
    std::map<std::string, std::size_t> given;
    for (const ProbeSpec& spec : specs)
        ++given[spec.str()];
    std::set<std::string> added;
    SpecExpander expander(pid);
    std::size_t n = 0;
    for (const ProbeSpec& spec : specs) {
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
            return std::move(r).error();
        }
        n += r->ids.size();
        for (const std::string& note : r->notes)
            err << "probectl: note: " << note << '\n';
        if (!r->glob)
            continue;
        err << r->summary() << '\n';
        if (verbose)
            err << r->details();
    }
    return n;
}

}  // namespace probectl::cli
