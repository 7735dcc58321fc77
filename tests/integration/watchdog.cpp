// A test that hangs would otherwise end only with the whole VM run's timeout, which names no
// test and loses the suite's output. This listener names the test that runs past its budget
// (PROBECTL_ITEST_TEST_BUDGET seconds, default 600), lists what its children and the kernel's
// blocked tasks are doing, and ends the binary: guest-suite then counts one failure.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace {

using Clock = std::chrono::steady_clock;

long budgetSeconds() {
    const char* env = std::getenv("PROBECTL_ITEST_TEST_BUDGET");
    if (env) {
        char* end = nullptr;
        long v = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && v > 0)
            return v;
    }
    return 600;
}

std::string firstLine(const std::string& path) {
    std::ifstream f(path);
    std::string line;
    std::getline(f, line);
    return line;
}

// A process shows its command line, a thread its name; both their kernel stack.
void describeTask(const std::string& dir, const char* what, const std::string& id,
                  const std::string& ppid, const std::string& state) {
    std::string name = firstLine(dir + "/comm");
    if (std::string(what) == "pid") {
        std::ifstream cmd(dir + "/cmdline");
        name.assign(std::istreambuf_iterator<char>(cmd), {});
        for (char& c : name)
            c = c == '\0' ? ' ' : c;
    }
    std::fprintf(stderr, "watchdog: %s %s ppid %s state %s: %s\n", what, id.c_str(), ppid.c_str(),
                 state.c_str(), name.c_str());
    std::ifstream stack(dir + "/stack");
    for (std::string line; std::getline(stack, line);)
        std::fprintf(stderr, "watchdog:     %s\n", line.c_str());
}

// State and ppid from a stat line: the fields after the ")" that ends the comm.
void stateOf(const std::string& stat, std::string& state, std::string& ppid) {
    std::istringstream in(stat.substr(stat.rfind(')') + 1));
    in >> state >> ppid;
}

// Every user process and each of its threads (this binary's too, but for the watching
// thread): its command line and kernel stack, so a test waiting on a workload, or a
// workload thread stuck in a ptrace-stop, shows where.
void describeProcesses() {
    DIR* d = opendir("/proc");
    if (!d)
        return;
    const std::string self_tid = std::to_string(gettid());
    while (dirent* e = readdir(d)) {
        std::string pid = e->d_name;
        if (pid.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::string stat = firstLine("/proc/" + pid + "/stat");
        if (stat.empty())
            continue;
        std::string state, ppid;
        stateOf(stat, state, ppid);
        // Kernel threads (ppid 2) are many and reported by sysrq-w when blocked.
        if (ppid == "2" || pid == "2")
            continue;
        describeTask("/proc/" + pid, "pid", pid, ppid, state);
        DIR* t = opendir(("/proc/" + pid + "/task").c_str());
        if (!t)
            continue;
        while (dirent* te = readdir(t)) {
            std::string tid = te->d_name;
            if (tid.find_first_not_of("0123456789") != std::string::npos || tid == pid ||
                tid == self_tid)
                continue;
            const std::string dir = "/proc/" + pid + "/task/" + tid;
            stateOf(firstLine(dir + "/stat"), state, ppid);
            describeTask(dir, "  thread", tid, ppid, state);
        }
        closedir(t);
    }
    closedir(d);
}

// Shared with the watching thread, which outlives main's return: never freed.
struct Running {
    std::mutex mu;
    std::string name;
    Clock::time_point start;
    bool running = false;
};
Running& running() {
    static Running* r = new Running;
    return *r;
}

[[noreturn]] void watch(long budget) {
    for (;;) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        std::string name;
        {
            Running& r = running();
            std::lock_guard lock(r.mu);
            if (!r.running || Clock::now() - r.start < std::chrono::seconds(budget))
                continue;
            name = r.name;
        }
        std::fprintf(stderr,
                     "[  FAILED  ] %s: still running after %ld s (PROBECTL_ITEST_TEST_BUDGET); "
                     "ending the suite\n",
                     name.c_str(), budget);
        describeProcesses();
        // The kernel's blocked tasks go to the kernel log.
        if (std::FILE* f = std::fopen("/proc/sysrq-trigger", "w")) {
            std::fputs("w", f);
            std::fclose(f);
        }
        std::fflush(stdout);
        std::fflush(stderr);
        _exit(3);
    }
}

class Watchdog : public testing::EmptyTestEventListener {
  public:
    void OnTestProgramStart(const testing::UnitTest&) override {
        std::thread(watch, budgetSeconds()).detach();
    }
    void OnTestStart(const testing::TestInfo& t) override {
        Running& r = running();
        std::lock_guard lock(r.mu);
        r.name = std::string(t.test_suite_name()) + "." + t.name();
        r.start = Clock::now();
        r.running = true;
    }
    void OnTestEnd(const testing::TestInfo&) override {
        Running& r = running();
        std::lock_guard lock(r.mu);
        r.running = false;
    }
};

// Registered before gtest_main's RUN_ALL_TESTS, which owns the listener from then on.
const bool kRegistered = [] {
    testing::UnitTest::GetInstance()->listeners().Append(new Watchdog);
    return true;
}();

}  // namespace

// Never runs in the suite: the watchdog's own check (tests/integration/CMakeLists.txt) runs it
// with a budget of 2 s.
TEST(WatchdogSelfTest, DISABLED_HangsUntilNamed) {
    std::this_thread::sleep_for(std::chrono::seconds(60));
}
