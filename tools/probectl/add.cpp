// probectl add: add one probe. Without --persist it belongs to this short-lived command's
// socket and is gone when the command exits, which is only useful to check that a spec is
// accepted; --persist keeps it until `probectl remove ID` or rmmod.
#include <fmt/format.h>

#include <cerrno>
#include <ostream>

#include "probectl/client.hpp"
#include "probectl/expand.hpp"
#include "probectl/session.hpp"
#include "spec_hints.hpp"
#include "subcommands.hpp"
#include "uapi/probectl.h"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kAddCmd = "add";
}

po::options_description addOptionsDescription(AddOptions* o) {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("persist", po::bool_switch(o ? &o->persist : nullptr),
         "keep the probe after this command exits (until 'probectl remove ID' or rmmod)")
        ("maxactive", bounded<std::uint32_t>(o ? &o->maxactive : nullptr, "maxactive", 1, PROBECTL_MAXACTIVE_MAX)->value_name("N"),
         "kretprobe instances in flight (1..4096)")
        ("force", po::bool_switch(o ? &o->force : nullptr),
         "add a uretprobe in a file that unwinds C++ exceptions (refused by default: an "
         "exception thrown through a probed call ends the program)");
    // clang-format on
    return d;
}

Parsed<AddOptions> parseAddOptions(const std::vector<std::string>& args) {
    po::variables_map vm;
    auto o = parseSpecOptions(kAddCmd, args, addOptionsDescription, vm);
    if (!o || o->help)
        return o;
    // add sends the location only: values and a predicate would be dropped in silence.
    if (!o->spec.fetch_args.empty() || !o->spec.predicate.empty())
        return UsageError{fmt::format(
            "'{}': add takes no fetch arguments or `if`: a probe it adds (persistent or not) "
            "counts hits and delivers no records, so values have nowhere to go; use probectl "
            "trace, count or hist for them, and add '{}' to count hits",
            o->spec.text, o->spec.locationStr())};
    if (auto glob = globRefusal(o->spec, "add",
                                "add them one at a time, or give the glob to trace, count, hist "
                                "or latency"))
        return UsageError{*glob};
    if (!vm.count("maxactive"))
        return o;
    if (auto e = maxactiveError({o->spec}, "kernel"))
        return *e;
    o->spec.maxactive = o->maxactive;
    return o;
}

int runAdd(const std::vector<std::string>& args, Io& io) {
    auto o = parseAddOptions(args);
    if (auto rc = parsedExit(io, kAddCmd, o))
        return *rc;
    SessionOptions so;
    so.uretprobe_despite_exceptions = o->force;
    auto resolved = Session::resolveRequest(o->spec, so);
    if (!resolved)
        return runtimeError(io, kAddCmd, resolved.error());
    ProbeRequest req = std::move(*resolved);
    if (o->persist)
        req.flags |= PROBECTL_PROBE_F_PERSISTENT;

    return withClient(io, kAddCmd, [&](Client& client) -> int {
        auto added = client.addProbe(req);
        if (!added) {
            Error e = added.error();
            e.message = fmt::format("{}: {}", o->spec.text, e.message);
            return runtimeError(io, kAddCmd, privilegeError(e, kAddCmd, false));
        }
        io.out << added->id << '\n';
        if (!o->persist)
            io.err << fmt::format(
                "note: probe {} belongs to this command and was removed when it "
                "exited; use --persist to keep it\n",
                added->id);
        return kExitOk;
    });
}

}  // namespace probectl::cli
