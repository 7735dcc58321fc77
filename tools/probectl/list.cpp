// probectl list: every probe the module holds, of every owner.
#include <ostream>

#include "format.hpp"
#include "probectl/client.hpp"
#include "subcommands.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kCmd = "list";
}

po::options_description listOptionsDescription(ListOptions*) {
    po::options_description d("Options");
    d.add_options()("help,h", "show this help");
    return d;
}

Parsed<ListOptions> parseListOptions(const std::vector<std::string>& args) {
    ListOptions o;
    auto desc = listOptionsDescription(&o);
    po::positional_options_description pos;
    po::variables_map vm;
    auto r = parseCommandLine(args, desc, pos, vm);
    if (!r)
        return std::move(r).error();
    o.help = *r;
    return o;
}

int runList(const std::vector<std::string>& args, Io& io) {
    auto o = parseListOptions(args);
    if (auto rc = parsedExit(io, kCmd, o))
        return *rc;
    return withClient(io, kCmd, [&](Client& client) -> int {
        auto probes = client.listProbes();
        if (!probes)
            return runtimeError(io, kCmd, probes.error());
        printProbeList(io.out, *probes);
        return kExitOk;
    });
}

}  // namespace probectl::cli
