// UserResolveCache's keeping (user_target.hpp describes what it is for). Internal to libctl.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "elf/elf_handle.hpp"
#include "elf/inlined_copies.hpp"
#include "probectl/elf_resolver.hpp"
#include "probectl/expand.hpp"
#include "probectl/user_target.hpp"

namespace probectl {

// One ELF file as the command read it: opened once, and kept open so that what is read of it
// later (its DWARF, whether it unwinds exceptions) comes from the same handle, each once,
// however many of its names are resolved.
class KeptElf {
  public:
    static Result<std::shared_ptr<KeptElf>> open(const std::string& path,
                                                 const ElfOpenOptions& options);

    const ElfResolver& elf() const { return elf_; }
    // findInlinedCopies in the file's DWARF (its debug file's when its symbols came from one).
    InlinedSearch inlinedCopies(std::string_view name, const std::vector<std::string>& linkages);
    // exceptionUse of the file.
    std::string exceptionUse();

  private:
    KeptElf(ElfHandle h, ElfResolver elf) : handle_(std::move(h)), elf_(std::move(elf)) {}

    ElfHandle handle_;
    std::optional<ElfHandle> debug_;  // the debug file ElfResolver read .symtab from
    ElfResolver elf_;
    std::mutex mu_;  // what follows: read on first need
    std::optional<InlinedCopyFinder> dwarf_;
    std::optional<std::string> exception_use_;
};

// findUserFile: through `cache` (once per name and process) when there is one.
Result<UserFile> findUserFileVia(UserResolveCache* cache, std::string_view path_or_library,
                                 const UserResolveOptions& options);
// The file `path` read with `options`: through `cache` (once for the command) when there is
// one, else read now for the caller alone.
Result<std::shared_ptr<KeptElf>> readKeptElf(UserResolveCache* cache, const std::string& path,
                                             const ElfOpenOptions& options);

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

    // findUserFile, once per name and process.
    Result<UserFile> file(std::string_view path_or_library, const UserResolveOptions& options);
    // The file `path` read with `options`, once: a thread asking while another reads it
    // waits for that reading.
    Result<std::shared_ptr<KeptElf>> elf(const std::string& path, const ElfOpenOptions& options);

    std::mutex mu;
    std::map<std::string, Result<std::vector<UserTarget>>> targets;  // resolveUserSpecAll
    std::map<std::string, Result<Expansion>> expansions;             // SpecExpander::expand
    std::map<std::string, Result<UserFile>> files;                   // findUserFile

  private:
    struct ElfSlot {
        std::mutex mu;
        std::optional<Result<std::shared_ptr<KeptElf>>> elf;
    };
    std::map<std::string, std::unique_ptr<ElfSlot>> elfs_;  // under `mu`
};

// What an answer about `spec` depends on, as a key: the spec (its text too: errors quote
// it), then the process and debug directory it is resolved for.
std::string userResolveKey(const ProbeSpec& spec, pid_t pid, const std::string& debug_dir);

}  // namespace probectl
