#include "attach.hpp"

#include "probectl/expand.hpp"

namespace probectl::cli {

Result<std::size_t> attachSpecs(Tracer& tracer, const std::vector<ProbeSpec>& specs, pid_t pid,
                                bool verbose, std::ostream& err) {
    SpecExpander expander(pid);
    std::size_t n = 0;
    for (const ProbeSpec& spec : specs) {
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
