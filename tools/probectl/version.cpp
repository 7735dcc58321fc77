#include "version.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <ostream>

#include "build_info.hpp"
#include "probectl/client.hpp"
#include "probectl/version.hpp"
#include "uapi/probectl.h"

namespace probectl::cli {

ModuleFacts readModuleFacts(const std::string& sysfs) {
    ModuleFacts facts;
    std::ifstream in(sysfs + "/module/probectl/version");
    std::string release;
    if (!in || !std::getline(in, release))
        return facts;
    facts.release = release;
    auto client = Client::connect();
    if (client)
        facts.protocol = client->familyVersion();
    else
        facts.protocol = client.error();
    return facts;
}

int printVersion(const ModuleFacts& module, Io& io) {
    const Version lib = version();
    io.out << fmt::format("probectl {} ({})\n", kCliRelease, kCliGitDescribe);
    io.out << fmt::format("libprobectl {}, protocol {}\n", lib.string, lib.protocol);
    if (!module.release) {
        io.out << "probectl.ko: not loaded\n";
        return kExitOk;
    }
    if (module.protocol) {
        io.out << fmt::format("probectl.ko {}, protocol {}\n", *module.release, *module.protocol);
        return kExitOk;
    }
    io.out << fmt::format("probectl.ko {}, protocol unknown\n", *module.release);
    const Error& e = module.protocol.error();
    if (e.err == EPROTO)
        io.err << fmt::format("probectl: probectl.ko {} cannot serve probectl {}: {}\n",
                              *module.release, kCliRelease, e.message);
    else
        io.err << fmt::format("probectl: probectl.ko {}: {}\n", *module.release, e.message);
    return kExitRuntime;
}

}  // namespace probectl::cli
