// PtraceSession: the public face of the ptrace engine (engine.hpp).
#include "probectl/ptrace_session.hpp"

#include <cerrno>

#include "ptrace/engine.hpp"
#include "target/process_tree.hpp"

namespace probectl {

struct PtraceSession::Impl {
    explicit Impl(PtraceSessionOptions o) : check(o.check), engine(std::move(o)) {}
    std::function<Result<void>(const ProbeSpec&)> check;
    ptrace::Engine engine;
    std::optional<SessionStats> final_stats;
};

PtraceSession::PtraceSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
    setAdoptsOrphans(impl_->engine.adoptsOrphans());
}
PtraceSession::PtraceSession(PtraceSession&&) noexcept = default;
PtraceSession& PtraceSession::operator=(PtraceSession&&) noexcept = default;

PtraceSession::~PtraceSession() {
    if (!impl_)
        return;
    if (!impl_->final_stats)
        (void)stop(nullptr);
    (void)impl_->engine.terminateCommand(0);
}

Result<PtraceSession> PtraceSession::open(PtraceSessionOptions options) {
    if (options.seccomp && options.command.empty())
        return makeError(EINVAL,
                         "the seccomp filter can only be given to a command started by the "
                         "session (-- CMD), not to a running process (-p)");
    if (options.tgids.empty() && options.command.empty())
        return makeError(EINVAL, "nothing to trace: give process ids or a command");
    const auto tgids = options.tgids;
    const bool has_command = !options.command.empty();
    const bool follow = options.follow;
    auto impl = std::make_unique<Impl>(std::move(options));
    // On an error the Impl's destructor detaches whatever was attached already.
    for (auto tgid : tgids)
        if (auto r = impl->engine.attach(static_cast<pid_t>(tgid)); !r)
            return std::move(r).error();
    // Forks from now on are followed; the children that exist already are attached too.
    // One that exited meanwhile, or that the kernel attached already as a new fork, fails
    // to attach and needs nothing.
    if (follow)
        for (auto tgid : tgids)
            for (pid_t d : descendantsOf(static_cast<pid_t>(tgid)))
                (void)impl->engine.attach(d);
    if (has_command)
        if (auto r = impl->engine.spawnCommand(); !r)
            return std::move(r).error();
    return PtraceSession(std::move(impl));
}

Result<std::uint32_t> PtraceSession::add(std::string_view spec) {
    auto parsed = parseProbeSpec(spec);
    if (!parsed)
        return toError(parsed.error());
    return add(*parsed);
}

Result<std::uint32_t> PtraceSession::add(const ProbeSpec& spec) {
    if (impl_->final_stats)
        return makeError(EINVAL, "the session has stopped");
    if (impl_->check)
        if (auto r = impl_->check(spec); !r)
            return std::move(r).error();
    auto id = impl_->engine.addProbe(spec);
    for (std::string& n : impl_->engine.takeAddNotes())
        addNote(std::move(n));
    return id;
}

Result<void> PtraceSession::release() {
    return impl_->engine.release();
}

Result<void> PtraceSession::start() {
    if (commandPid() <= 0)
        return {};
    return release();
}

Result<std::size_t> PtraceSession::poll(int timeout_ms, const EventCallback& cb) {
    if (impl_->final_stats)
        return std::size_t{0};
    return impl_->engine.poll(timeout_ms, cb);
}

Result<SessionStats> PtraceSession::stop(const EventCallback& cb) {
    if (!impl_->final_stats) {
        impl_->engine.detachAll(cb);
        impl_->final_stats = impl_->engine.stats();
    }
    return *impl_->final_stats;
}

bool PtraceSession::watchTaskEnds(TaskEndCallback cb) {
    impl_->engine.watchEnds(std::move(cb));
    return true;
}

bool PtraceSession::done() const {
    return impl_->final_stats.has_value() || impl_->engine.done();
}

std::optional<int> PtraceSession::commandStatus() const {
    return impl_->engine.commandStatus();
}

pid_t PtraceSession::commandPid() const {
    return impl_->engine.commandPid();
}

std::optional<int> PtraceSession::terminateCommand(int grace_ms) {
    return impl_->engine.terminateCommand(grace_ms);
}

bool PtraceSession::killCommand() {
    return impl_->engine.killCommand();
}

const std::vector<PtraceProbe>& PtraceSession::probes() const {
    return impl_->engine.probeInfo();
}

std::vector<pid_t> PtraceSession::threads() const {
    return impl_->engine.threadIds();
}

}  // namespace probectl
