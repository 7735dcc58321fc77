// Which processes and threads a writer has already described, so each is named once (and
// again when a thread's comm changes, as after exec; a process when its main thread's
// does). Memory: one entry per thread and process seen.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "probectl/event.hpp"

namespace probectl::exporter {

class ThreadNames {
  public:
    struct Seen {
        bool name_process = false;  // first event of ev.tgid, or its main thread's comm changed
        bool name_thread = false;   // first event of ev.pid, or its comm changed
    };
    Seen see(const Event& ev) {
        Seen s;
        // A process is named by its first event's thread until its main thread says
        // otherwise (it was named by its pre-exec comm for good).
        auto [p, first] = processes_.try_emplace(ev.tgid, ev.comm);
        if (first || (ev.pid == ev.tgid && p->second != ev.comm)) {
            p->second = ev.comm;
            s.name_process = true;
        }
        auto [it, inserted] = threads_.try_emplace(ev.pid);
        if (inserted || it->second != ev.comm) {
            it->second = ev.comm;
            s.name_thread = true;
        }
        return s;
    }

  private:
    std::unordered_map<std::uint32_t, std::string> processes_;
    std::unordered_map<std::uint32_t, std::string> threads_;
};

// Pid of the pseudo-process "probectl" that carries probectl's own counters (drops, lost
// records; Perfetto's are global tracks of those names): no task has it, since Linux pids
// are below PID_MAX_LIMIT (2^22), and unlike -1 cast to 0xffffffff the trace viewers read
// it as the number it is. Not 0 (the idle tasks, whose kernel events a trace may hold),
// nor probectl's pid (a recording is converted by another process, whose pid a traced
// task may have had).
inline constexpr std::uint32_t kCountersPid = 1u << 22;

}  // namespace probectl::exporter
