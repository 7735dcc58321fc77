// probectl enable: re-arm a disabled probe (counters are kept).
// probectl disable: disarm a probe without removing it (counters are kept).
// One implementation, parameterised by the command.
#include <fmt/format.h>

#include <ostream>

#include "probectl/client.hpp"
#include "subcommands.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

po::options_description probeIdOptionsDescription(ProbeIdOptions* o) {
    po::options_description d("Options");
    d.add_options()("help,h", "show this help");
    (void)o;
    return d;
}

Parsed<ProbeIdOptions> parseProbeIdOptions(const char* command,
                                           const std::vector<std::string>& args) {
    ProbeIdOptions o;
    auto desc = probeIdOptionsDescription(&o);
    po::variables_map vm;
    auto arg = parseOnePositional(
        args, desc, "id", "probe id",
        fmt::format("{} takes exactly one probe id (see 'probectl list')", command), vm);
    if (!arg)
        return std::move(arg).error();
    o.help = !*arg;
    if (o.help)
        return o;
    auto id = parseProbeId(**arg);
    if (!id)
        return std::move(id).error();
    o.id = *id;
    return o;
}

namespace {

// `probectl COMMAND ID`: calls `op` on the probe, then says "DONE probe ID".
int runProbeIdCommand(const char* command, Result<void> (Client::*op)(std::uint32_t),
                      const char* done, const std::vector<std::string>& args, Io& io) {
    auto o = parseProbeIdOptions(command, args);
    if (auto rc = parsedExit(io, command, o))
        return *rc;
    return withClient(io, command, [&](Client& client) -> int {
        if (auto r = (client.*op)(o->id); !r)
            return runtimeError(io, command,
                                privilegeError(probeIdError(r.error()), command, false));
        io.out << fmt::format("{} probe {}\n", done, o->id);
        return kExitOk;
    });
}

}  // namespace

int runEnable(const std::vector<std::string>& args, Io& io) {
    return runProbeIdCommand("enable", &Client::enable, "enabled", args, io);
}

int runDisable(const std::vector<std::string>& args, Io& io) {
    return runProbeIdCommand("disable", &Client::disable, "disabled", args, io);
}

}  // namespace probectl::cli
