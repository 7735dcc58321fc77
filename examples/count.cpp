// probectl-count: libprobectl embedded in another program. Adds the probes given on the
// command line (a kprobe and a uprobe, say) for a command it starts, counts each probe's
// events in the record callback and prints a summary with the kernel's counters.
//
//   sudo probectl-count kprobe:do_sys_openat2 uprobe:libc:malloc -- ls /
//
// Build it against an installed libprobectl: `make` (pkg-config) or CMake
// (find_package(probectl)); see README.md in this folder.
#include <probectl/session.hpp>
#include <probectl/version.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

int usage() {
    std::fprintf(stderr,
                 "usage: probectl-count SPEC... -- CMD [ARGS...]\n"
                 "       probectl-count --version\n");
    return 2;
}

// The header this program was compiled with and the library it runs with.
bool printVersion() {
    const probectl::Version lib = probectl::version();
    std::printf("libprobectl %s (built against %s)\n", lib.string, PROBECTL_VERSION_STRING);
    if (lib.major != PROBECTL_VERSION_MAJOR) {
        std::fprintf(stderr, "probectl-count: libprobectl %s is not ABI %d\n", lib.string,
                     PROBECTL_VERSION_MAJOR);
        return false;
    }
    return true;
}

// Forks CMD held on a pipe, so the probes exist and the session follows its pid before
// it runs a single instruction of its own.
struct Child {
    pid_t pid = -1;
    int go = -1;  // write end: closing it lets the child exec
};

Child spawnHeld(char** argv) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return {};
    const pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(fds[1]);
        if (read(fds[0], &c, 1) != 0)  // EOF is the go signal; a byte means give up
            _exit(127);
        execvp(argv[0], argv);
        std::perror(argv[0]);
        _exit(127);
    }
    close(fds[0]);
    return {pid, fds[1]};
}

}  // namespace

int main(int argc, char** argv) {
    // Needs no module: shows that the program links and runs with the installed library.
    if (argc == 2 && std::strcmp(argv[1], "--version") == 0)
        return printVersion() ? 0 : 1;
    std::vector<std::string> specs;
    int i = 1;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; i++)
        specs.push_back(argv[i]);
    if (specs.empty() || i + 1 >= argc)
        return usage();

    if (!printVersion())
        return 1;

    Child child = spawnHeld(argv + i + 1);
    if (child.pid < 0) {
        std::perror("probectl-count: fork");
        return 1;
    }
    probectl::SessionOptions options;
    options.tgids = {static_cast<std::uint32_t>(child.pid)};
    options.resolve_pid = child.pid;  // libraries and paths as CMD sees them
    auto session = probectl::Session::open(options);
    std::map<std::uint32_t, std::uint64_t> counts;  // probe id -> events
    bool ok = static_cast<bool>(session);
    if (!ok)
        std::fprintf(stderr, "probectl-count: %s\n", session.error().describe().c_str());
    for (const auto& spec : specs) {
        if (!ok)
            break;
        auto id = session->add(spec);
        if (!id) {
            std::fprintf(stderr, "probectl-count: %s\n", id.error().describe().c_str());
            ok = false;
        }
    }
    if (!ok) {
        (void)!write(child.go, "x", 1);
        close(child.go);
        waitpid(child.pid, nullptr, 0);
        return 1;
    }
    close(child.go);

    // Views over the kernel's records: counting needs no copy of any event (an owning
    // probectl::Event would be e.toEvent()).
    const auto count = [&](const probectl::EventView& e) { counts[e.probeId()]++; };
    int status = 0;
    bool exited = false;
    auto ran = session->runViews(count, [&] {
        exited = waitpid(child.pid, &status, WNOHANG) == child.pid;
        return exited;
    });
    auto stats = session->stopViews(count);
    if (!ran || !stats) {
        std::fprintf(stderr, "probectl-count: %s\n",
                     (!ran ? ran.error() : stats.error()).describe().c_str());
        return 1;
    }
    std::printf("%-50s %10s %10s\n", "PROBE", "EVENTS", "HITS");
    std::uint64_t total = 0;
    for (const auto& p : stats->probes) {
        std::printf("%-50s %10llu %10llu\n", p.spec.c_str(),
                    static_cast<unsigned long long>(counts[p.id]),
                    static_cast<unsigned long long>(p.hits));
        total += counts[p.id];
    }
    std::printf("%llu events, command exit status %d\n", static_cast<unsigned long long>(total),
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
