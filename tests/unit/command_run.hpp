// Runs a subcommand in this process with its output captured, for the CLI tests.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace probectl::test {

struct CmdRun {
    int rc;
    std::string out;
    std::string err;
};

inline CmdRun runCommand(const std::string& name, const std::vector<std::string>& args) {
    std::ostringstream out, err;
    cli::Io io{out, err};
    const cli::Command* c = cli::findCommand(name);
    EXPECT_NE(c, nullptr) << name;
    const int rc = c ? c->run(args, io) : -1;
    return {rc, out.str(), err.str()};
}

// ARGS plus the fixture kallsyms and blacklist, so that kernel specs resolve without a kernel.
inline std::vector<std::string> withFixtures(std::vector<std::string> args) {
    const std::string dir = PROBECTL_FIXTURES;
    args.insert(args.end(),
                {"--kallsyms", dir + "/kallsyms.txt", "--blacklist", dir + "/blacklist.txt"});
    return args;
}

}  // namespace probectl::test
