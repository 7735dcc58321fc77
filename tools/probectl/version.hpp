// `probectl --version`: this CLI's release and commit, the library's, and the loaded
// module's release and protocol, with a clear verdict when the module speaks another
// protocol than this CLI.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli.hpp"

namespace probectl::cli {

// What the kernel side says; nullopt release = probectl.ko is not loaded.
struct ModuleFacts {
    std::optional<std::string> release;  // /sys/module/probectl/version
    // The family's protocol version from the kernel, or why it could not be read.
    Result<std::uint32_t> protocol = std::uint32_t{0};
};

// Reads ModuleFacts under `sysfs` (tests point it elsewhere). Connects to the family only
// when the module is loaded, so that --version never autoloads it.
ModuleFacts readModuleFacts(const std::string& sysfs = "/sys");

// The --version text; returns the exit code (kExitRuntime on a protocol mismatch or an
// unreadable module, which are also printed to io.err).
int printVersion(const ModuleFacts& module, Io& io);

}  // namespace probectl::cli
