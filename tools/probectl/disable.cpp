// probectl disable: disarm a probe without removing it (counters are kept).
#include <fmt/format.h>

#include <ostream>

#include "probectl/client.hpp"
#include "subcommands.hpp"

namespace probectl::cli {

int runDisable(const std::vector<std::string>& args, Io& io) {
    constexpr const char* kCmd = "disable";
    auto o = parseProbeIdOptions(kCmd, args);
    if (!o)
        return usageError(io, kCmd, o.error());
    if (o->help) {
        printHelp(*findCommand(kCmd), io.out);
        return kExitOk;
    }
    auto client = Client::connect();
    if (!client)
        return runtimeError(io, kCmd, client.error());
    if (auto r = client->disable(o->id); !r)
        return runtimeError(io, kCmd, r.error());
    io.out << fmt::format("disabled probe {}\n", o->id);
    return kExitOk;
}

}  // namespace probectl::cli
