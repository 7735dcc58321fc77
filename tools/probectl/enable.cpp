// probectl enable: re-arm a disabled probe (counters are kept).
#include <fmt/format.h>

#include <ostream>

#include "probectl/client.hpp"
#include "subcommands.hpp"

namespace probectl::cli {

int runEnable(const std::vector<std::string>& args, Io& io) {
    constexpr const char* kCmd = "enable";
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
    if (auto r = client->enable(o->id); !r)
        return runtimeError(io, kCmd, r.error());
    io.out << fmt::format("enabled probe {}\n", o->id);
    return kExitOk;
}

}  // namespace probectl::cli
