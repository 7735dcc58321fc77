// probectl remove: remove probes by id (persistent ones, typically), or --all.
#include <fmt/format.h>

#include <ostream>

#include "probectl/client.hpp"
#include "subcommands.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kCmd = "remove";
}

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
    std::vector<std::string> ids;
    desc.add_options()("id", po::value<std::vector<std::string>>(&ids), "probe id");
    po::positional_options_description pos;
    pos.add("id", -1);
    po::variables_map vm;
    auto r = parseCommandLine(args, desc, pos, vm);
    if (!r)
        return std::move(r).error();
    if (*r) {
        o.help = true;
        return o;
    }
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
    if (!o)
        return usageError(io, kCmd, o.error());
    if (o->help) {
        printHelp(*findCommand(kCmd), io.out);
        return kExitOk;
    }
    auto client = Client::connect();
    if (!client)
        return runtimeError(io, kCmd, client.error());
    std::vector<std::uint32_t> ids = o->ids;
    if (o->all) {
        auto list = client->listProbes();
        if (!list)
            return runtimeError(io, kCmd, list.error());
        for (const auto& p : *list)
            ids.push_back(p.id);
    }
    int rc = kExitOk;
    for (auto id : ids) {
        if (auto r = client->removeProbe(id); !r)
            rc = runtimeError(io, kCmd, r.error());
        else
            io.out << fmt::format("removed probe {}\n", id);
    }
    return rc;
}

}  // namespace probectl::cli
