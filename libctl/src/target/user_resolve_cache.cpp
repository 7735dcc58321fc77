// UserResolveCache's files: each read once for the command (user_resolve_cache.hpp).
#include "target/user_resolve_cache.hpp"

#include <fmt/format.h>

#include "elf/eh_use.hpp"
#include "elf/elf_read.hpp"

namespace probectl {

Result<std::shared_ptr<KeptElf>> KeptElf::open(const std::string& path,
                                               const ElfOpenOptions& options) {
    auto h = ElfHandle::open(path);
    if (!h)
        return std::move(h).error();
    std::optional<ElfHandle> debug;
    auto elf = readElfResolver(*h, path, options, debug);
    if (!elf)
        return std::move(elf).error();
    std::shared_ptr<KeptElf> k(new KeptElf(std::move(*h), std::move(*elf)));
    if (debug)
        k->debug_.emplace(std::move(*debug));
    return k;
}

InlinedSearch KeptElf::inlinedCopies(std::string_view name,
                                     const std::vector<std::string>& linkages) {
    const std::lock_guard lock(mu_);
    if (!dwarf_) {
        // The debug file ElfResolver took the symbols from holds the DWARF too.
        if (debug_)
            dwarf_.emplace(debug_->get(), elf_.debugFile());
        else
            dwarf_.emplace(handle_.get(), elf_.path());
    }
    return dwarf_->find(name, linkages);
}

std::string KeptElf::exceptionUse() {
    const std::lock_guard lock(mu_);
    if (!exception_use_)
        exception_use_ = probectl::exceptionUse(handle_.get());
    return *exception_use_;
}

Result<UserFile> UserResolveCache::Impl::file(std::string_view path_or_library,
                                              const UserResolveOptions& options) {
    return get<UserFile>(files, fmt::format("{}\n{}", path_or_library, options.pid),
                         [&] { return findUserFile(path_or_library, options); });
}

Result<std::shared_ptr<KeptElf>> UserResolveCache::Impl::elf(const std::string& path,
                                                             const ElfOpenOptions& options) {
    ElfSlot* slot = nullptr;
    {
        const std::lock_guard lock(mu);
        auto& s = elfs_[fmt::format("{}\n{}\n{}", path, options.debug_dir, options.root)];
        if (!s)
            s = std::make_unique<ElfSlot>();
        slot = s.get();
    }
    const std::lock_guard lock(slot->mu);
    if (!slot->elf)
        slot->elf = KeptElf::open(path, options);
    return *slot->elf;
}

Result<UserFile> findUserFileVia(UserResolveCache* cache, std::string_view path_or_library,
                                 const UserResolveOptions& options) {
    return cache ? cache->impl().file(path_or_library, options)
                 : findUserFile(path_or_library, options);
}

Result<std::shared_ptr<KeptElf>> readKeptElf(UserResolveCache* cache, const std::string& path,
                                             const ElfOpenOptions& options) {
    return cache ? cache->impl().elf(path, options) : KeptElf::open(path, options);
}

}  // namespace probectl
