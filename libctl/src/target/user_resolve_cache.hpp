// UserResolveCache's keeping (user_target.hpp describes what it is for). Internal to libctl.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "probectl/expand.hpp"
#include "probectl/user_target.hpp"

namespace probectl {

struct UserResolveCache::Impl {
    // The answer kept under `key` in `kept`, else what `make` answers, kept. The lock is not
    // held while `make` reads the file: two threads asking at once both read it.
    template <class T>
    Result<T> get(std::map<std::string, Result<T>>& kept, const std::string& key,
                  const std::function<Result<T>()>& make) {
        {
            const std::lock_guard lock(mu);
            if (auto it = kept.find(key); it != kept.end())
                return it->second;
        }
        Result<T> r = make();
        const std::lock_guard lock(mu);
        kept.emplace(key, r);
        return r;
    }

    std::mutex mu;
    std::map<std::string, Result<std::vector<UserTarget>>> targets;  // resolveUserSpecAll
    std::map<std::string, Result<Expansion>> expansions;             // SpecExpander::expand
};

// What an answer about `spec` depends on, as a key: the spec (its text too: errors quote
// it), then the process and debug directory it is resolved for.
std::string userResolveKey(const ProbeSpec& spec, pid_t pid, const std::string& debug_dir);

}  // namespace probectl
