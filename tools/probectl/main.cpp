// probectl: dispatches argv[1] through the command table. Exceptions are programming
// errors or out-of-memory; they are caught once here. Every command's writes to stdout and
// stderr are checked once here too, at exit (std_streams.hpp).
#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>

#include "cli.hpp"
#include "run_loop.hpp"
#include "std_streams.hpp"
#include "version.hpp"

using namespace probectl::cli;

namespace {

// `probectl --backend=ptrace count ...`: options belong to a command and follow its name.
// Which words of those before it are values depends on the command, so they are not
// moved silently: the message shows where they go.
int optionBeforeCommand(int argc, char** argv) {
    int at = 1;
    while (at < argc && !findCommand(argv[at]))
        at++;
    std::string moved;
    for (int i = 1; i < at; i++)
        moved += fmt::format(" {}", argv[i]);
    std::cerr << fmt::format(
        "probectl: '{}' is an option of a command: put it after the command (probectl {}{} "
        "...)\nTry 'probectl {}--help'.\n",
        argv[1], at < argc ? argv[at] : "COMMAND", moved,
        at < argc ? fmt::format("{} ", argv[at]) : std::string());
    return kExitUsage;
}

int run(int argc, char** argv, Io& io) {
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
        if (!cmd && name.size() > 1 && name[0] == '-' && name != "--")
            return optionBeforeCommand(argc, argv);
        if (!cmd) {
            std::cerr << fmt::format("probectl: unknown command '{}'\nTry 'probectl --help'.\n",
                                     name);
            return kExitUsage;
        }
        return cmd->run(std::vector<std::string>(argv + 2, argv + argc), io);
    } catch (const std::exception& e) {
        std::cerr << "probectl: internal error: " << e.what() << '\n';
        return kExitRuntime;
    }
}

// A write past RLIMIT_FSIZE (`ulimit -f`) then fails with EFBIG and is said, the output
// removed, as for a full disk; by default SIGXFSZ killed probectl with the file half
// written. A handler, not SIG_IGN: exec resets a handler, so the traced command keeps the
// default action, whereas an ignored signal would stay ignored in it.
void writesPastTheFileLimitFail() {
    struct sigaction sa {};
    if (::sigaction(SIGXFSZ, nullptr, &sa) != 0 || sa.sa_handler != SIG_DFL)
        return;
    sa.sa_handler = [](int) {};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGXFSZ, &sa, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
    writesPastTheFileLimitFail();
    Io io{std::cout, std::cerr, ::isatty(STDERR_FILENO) == 1, ::isatty(STDOUT_FILENO) == 1};
    FdOutBuf out(STDOUT_FILENO);
    std::cout.rdbuf(&out);
    // On a terminal each write shows at once, as stdio's line buffering did.
    if (io.out_is_tty)
        std::cout << std::unitbuf;
    const int code = run(argc, argv, io);
    const std::string who =
        argc >= 2 && findCommand(argv[1]) ? fmt::format("probectl {}", argv[1]) : "probectl";
    const int rc =
        finishStreams(code, who, std::cout, stdout, std::cerr, stderr, io.out_error_told);
    // The command a run traced was killed by a signal: so is probectl, once its output is
    // out and checked (strace's rule), so that a shell sees the interrupt.
    if (const int sig = takeExitSignal()) {
        std::fflush(nullptr);
        dieOf(sig);
    }
    std::cout.rdbuf(nullptr);  // `out` ends here; std::cout is flushed again at exit
    return rc;
}
