// libtracefs as a live reader (bench_tracefs.hpp).
#include "bench_tracefs.hpp"

#include <dlfcn.h>
#include <event-parse.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

namespace probectl::cli::bench {

namespace {

// The functions used, bound from the library dlopen found. libtraceevent's types are its
// header's; tracefs.h does not compile as C++ (an int passed as an enum), so its two
// functions are declared here as libtracefs(3) documents them.
using TracefsCallback = int (*)(tep_event*, tep_record*, int, void*);
struct TracefsApi {
    tep_handle* (*local_events_system)(const char* tracing_dir,
                                       const char* const* sys_names) = nullptr;
    int (*iterate_raw_events)(tep_handle* tep, struct tracefs_instance* instance, cpu_set_t* cpus,
                              int cpu_size, TracefsCallback callback, void* context) = nullptr;
    decltype(&tep_find_event_by_name) find_event_by_name = nullptr;
    decltype(&tep_find_field) find_field = nullptr;
    decltype(&tep_read_number_field) read_number_field = nullptr;
    decltype(&tep_free) free = nullptr;
};

template <typename F>
bool bind(void* lib, const char* name, F& f) {
    f = reinterpret_cast<F>(::dlsym(lib, name));
    return f != nullptr;
}

// Loaded once per process, as libctl loads capstone; a failure is kept too.
Result<const TracefsApi*> tracefsApi() {
    static std::once_flag once;
    static TracefsApi api;
    static std::string error;
    std::call_once(once, [] {
        void* lib = ::dlopen(PROBECTL_TRACEFS_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* why = ::dlerror();
            error = fmt::format(
                "this row reads with libtracefs, {} (Debian package "
                "libtracefs1), which could not be loaded ({})",
                PROBECTL_TRACEFS_SONAME, why ? why : "no reason given");
            return;
        }
        // dlsym on the handle also searches libtraceevent, a dependency of libtracefs.
        if (!bind(lib, "tracefs_local_events_system", api.local_events_system) ||
            !bind(lib, "tracefs_iterate_raw_events", api.iterate_raw_events) ||
            !bind(lib, "tep_find_event_by_name", api.find_event_by_name) ||
            !bind(lib, "tep_find_field", api.find_field) ||
            !bind(lib, "tep_read_number_field", api.read_number_field) ||
            !bind(lib, "tep_free", api.free)) {
            error = fmt::format("{}: not the libtracefs expected ({})", PROBECTL_TRACEFS_SONAME,
                                ::dlerror());
            api = {};
            ::dlclose(lib);
        }
    });
    if (!error.empty())
        return makeError(ELIBACC, error);
    return &api;
}

}  // namespace

struct TracefsReader::Impl {
    const TracefsApi* api = nullptr;
    tep_handle* tep = nullptr;
    tep_event* event = nullptr;
    tep_format_field* field = nullptr;
    std::vector<int> poll_fds;  // every CPU's trace_pipe_raw, only to wait for data
    std::thread thread;
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> events{0}, missed{0};

    ~Impl() {
        if (thread.joinable()) {
            stop = true;
            thread.join();
        }
        for (int fd : poll_fds)
            ::close(fd);
        if (tep)
            api->free(tep);
    }

    static int onEvent(tep_event* ev, tep_record* rec, int /*cpu*/, void* ctx) {
        auto* self = static_cast<Impl*>(ctx);
        if (rec->missed_events)
            self->missed.fetch_add(1, std::memory_order_relaxed);
        unsigned long long v = 0;
        if (ev == self->event && self->api->read_number_field(self->field, rec->data, &v) == 0)
            self->events.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }

    void run() {
        std::vector<pollfd> p;
        for (int fd : poll_fds)
            p.push_back({fd, POLLIN, 0});
        for (;;) {
            const bool last = stop.load();
            api->iterate_raw_events(tep, nullptr, nullptr, 0, &Impl::onEvent, this);
            if (last)
                return;
            (void)::poll(p.data(), p.size(), 10);
        }
    }
};

Result<std::unique_ptr<TracefsReader>> TracefsReader::open(const std::string& root,
                                                           const std::string& system,
                                                           const std::string& event,
                                                           const std::string& field) {
    auto api = tracefsApi();
    if (!api)
        return std::move(api).error();
    auto impl = std::make_unique<Impl>();
    impl->api = *api;
    const char* systems[] = {system.c_str(), nullptr};
    impl->tep = impl->api->local_events_system(root.c_str(), systems);
    if (!impl->tep)
        return makeError(
            ENOENT, fmt::format("{}/events/{}: libtracefs parsed no event formats", root, system));
    impl->event = impl->api->find_event_by_name(impl->tep, system.c_str(), event.c_str());
    if (!impl->event)
        return makeError(ENOENT, fmt::format("{}/events/{}/{}: not found by libtraceevent", root,
                                             system, event));
    impl->field = impl->api->find_field(impl->event, field.c_str());
    if (!impl->field)
        return makeError(ENOENT,
                         fmt::format("{}/events/{}/{}: no field '{}'", root, system, event, field));
    std::error_code ec;
    for (const auto& cpu : std::filesystem::directory_iterator(root + "/per_cpu", ec)) {
        const std::string path = cpu.path().string() + "/trace_pipe_raw";
        const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            return makeError(errno, path);
        impl->poll_fds.push_back(fd);
    }
    return std::unique_ptr<TracefsReader>(new TracefsReader(std::move(impl)));
}

TracefsReader::TracefsReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TracefsReader::~TracefsReader() = default;

void TracefsReader::start() {
    impl_->thread = std::thread([this] { impl_->run(); });
}

void TracefsReader::stop() {
    impl_->stop = true;
    if (impl_->thread.joinable())
        impl_->thread.join();
}

std::uint64_t TracefsReader::events() const {
    return impl_->events;
}

std::uint64_t TracefsReader::missed() const {
    return impl_->missed;
}

}  // namespace probectl::cli::bench
