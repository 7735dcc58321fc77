// probectl remove: remove probes by id (persistent ones, typically), or --all.
#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <ostream>

#include "owners.hpp"
#include "probectl/client.hpp"
#include "subcommands.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kRemoveCmd = "remove";

// "pid 1234 (probectl)", or the netlink port when the process cannot be found.
std::string ownerName(std::uint32_t portid) {
    std::ifstream in("/proc/net/netlink");
    const std::string table((std::istreambuf_iterator<char>(in)), {});
    const auto owners = probeOwners(genlSocketInodes(table));
    if (auto it = owners.find(portid); it != owners.end())
        return fmt::format("pid {} ({})", it->second.pid, it->second.comm);
    return fmt::format("netlink port {}", portid);
}

}  // namespace

po::options_description removeOptionsDescription(RemoveOptions* o) {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("all", po::bool_switch(o ? &o->all : nullptr), "remove every probe this user may remove");
    // clang-format on
    return d;
}

Parsed<RemoveOptions> parseRemoveOptions(const std::vector<std::string>& args) {
    RemoveOptions o;
    auto desc = removeOptionsDescription(&o);
    po::variables_map vm;
    auto positionals = parsePositionals(args, desc, "id", "probe id", vm);
    if (!positionals)
        return std::move(positionals).error();
    o.help = positionals->help;
    if (o.help)
        return o;
    const auto& ids = positionals->values;
    if (o.all && !ids.empty())
        return UsageError{"give probe ids or --all, not both"};
    if (!o.all && ids.empty())
        return UsageError{"which probe? give an id (see 'probectl list') or --all"};
    for (const auto& s : ids) {
        auto id = parseProbeId(s);
        if (!id)
            return std::move(id).error();
        o.ids.push_back(*id);
    }
    return o;
}

int runRemove(const std::vector<std::string>& args, Io& io) {
    auto o = parseRemoveOptions(args);
    if (auto rc = parsedExit(io, kRemoveCmd, o))
        return *rc;
    return withClient(io, kRemoveCmd, [&](Client& client) -> int {
        std::vector<std::uint32_t> ids = o->ids;
        if (o->all) {
            auto list = client.listProbes();
            if (!list)
                return runtimeError(io, kRemoveCmd,
                                    privilegeError(list.error(), kRemoveCmd, false));
            for (const auto& p : *list)
                ids.push_back(p.id);
            // Silence would not tell "nothing there" from "nothing done".
            if (ids.empty())
                io.out << "no probes to remove\n";
        }
        int rc = kExitOk;
        for (auto id : ids) {
            auto info = client.getProbe(id);
            if (auto r = client.removeProbe(id); !r)
                rc = runtimeError(io, kRemoveCmd,
                                  privilegeError(probeIdError(r.error()), kRemoveCmd, false));
            else if (info && info->owner && info->owner != client.portid())
                io.out << fmt::format(
                    "removed probe {}, which {} was tracing: its trace keeps "
                    "the probe's counters up to now\n",
                    id, ownerName(info->owner));
            else
                io.out << fmt::format("removed probe {}\n", id);
        }
        return rc;
    });
}

}  // namespace probectl::cli
