// probectl list: every probe the module holds, of every owner.
#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <ostream>

#include "format.hpp"
#include "probectl/client.hpp"
#include "subcommands.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kListCmd = "list";
}

po::options_description listOptionsDescription(ListOptions* o) {
    po::options_description d("Options");
    d.add_options()  //
        ("format", po::value<std::string>(o ? &o->format : nullptr)->value_name("FMT"),
         "text (default) or json: one object {\"type\":\"list\",\"probes\":[...]} with "
         "the same fields and numbers as the table")  //
        ("help,h", "show this help");
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
    if (o.format != "text" && o.format != "json")
        return UsageError{fmt::format("--format must be text or json, not '{}'", o.format)};
    return o;
}

int runList(const std::vector<std::string>& args, Io& io) {
    auto o = parseListOptions(args);
    if (auto rc = parsedExit(io, kListCmd, o))
        return *rc;
    return withClient(io, kListCmd, [&](Client& client) -> int {
        auto probes = client.listProbes();
        if (!probes)
            return runtimeError(io, kListCmd, privilegeError(probes.error(), kListCmd, false));
        std::ifstream in("/proc/net/netlink");
        const std::string table((std::istreambuf_iterator<char>(in)), {});
        printProbeList(io.out, *probes, o->format == "json", probeOwners(genlSocketInodes(table)));
        return kExitOk;
    });
}

}  // namespace probectl::cli
