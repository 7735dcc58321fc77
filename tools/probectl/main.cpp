// probectl: dispatches argv[1] through the command table. Exceptions are programming
// errors or out-of-memory; they are caught once here.
#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>

#include "cli.hpp"
#include "run_loop.hpp"
#include "version.hpp"

using namespace probectl::cli;

int main(int argc, char** argv) {
    Io io{std::cout, std::cerr, ::isatty(STDERR_FILENO) == 1, ::isatty(STDOUT_FILENO) == 1};
    try {
        if (argc < 2) {
            printMainHelp(std::cerr);
            return kExitUsage;
        }
        const std::string name = argv[1];
        if (name == "-h" || name == "--help" || name == "help") {
            if (argc > 2) {
                const Command* c = findCommand(argv[2]);
                if (!c) {
                    std::cerr << fmt::format(
                        "probectl: no help for '{}': no such command\nTry 'probectl --help'.\n",
                        argv[2]);
                    return kExitUsage;
                }
                printHelp(*c, std::cout);
                return kExitOk;
            }
            printMainHelp(std::cout);
            return kExitOk;
        }
        if (name == "-V" || name == "--version") {
            if (argc > 2) {
                std::cerr << "probectl: --version takes no arguments\n";
                return kExitUsage;
            }
            return printVersion(readModuleFacts(), io);
        }
        const Command* cmd = findCommand(name);
        if (!cmd) {
            std::cerr << fmt::format("probectl: unknown command '{}'\nTry 'probectl --help'.\n",
                                     name);
            return kExitUsage;
        }
        const int rc = cmd->run(std::vector<std::string>(argv + 2, argv + argc), io);
        // The command a run traced was killed by a signal: so is probectl, once its output
        // is out (strace's rule), so that a shell sees the interrupt.
        if (const int sig = takeExitSignal()) {
            std::cout.flush();
            std::cerr.flush();
            std::fflush(nullptr);
            dieOf(sig);
        }
        return rc;
    } catch (const std::exception& e) {
        std::cerr << "probectl: internal error: " << e.what() << '\n';
        return kExitRuntime;
    }
}
