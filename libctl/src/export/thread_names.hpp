// Which processes and threads a writer has already described, so each is named once (and
// again when a thread's comm changes, as after exec). Memory: one entry per thread seen.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "probectl/event.hpp"

namespace probectl::exporter {

class ThreadNames {
  public:
    struct Seen {
        bool new_process = false;  // first event of ev.tgid
        bool name_thread = false;  // first event of ev.pid, or its comm changed
    };
    Seen see(const Event& ev) {
        Seen s;
        s.new_process = processes_.insert(ev.tgid).second;
        auto [it, inserted] = threads_.try_emplace(ev.pid);
        if (inserted || it->second != ev.comm) {
            it->second = ev.comm;
            s.name_thread = true;
        }
        return s;
    }

  private:
    std::unordered_set<std::uint32_t> processes_;
    std::unordered_map<std::uint32_t, std::string> threads_;
};

// Pid of the pseudo-process that carries probectl's own counters (drops, lost records):
// no task has it.
inline constexpr std::uint32_t kCountersPid = 0xffffffffu;

}  // namespace probectl::exporter
