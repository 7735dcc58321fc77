// The kernel's kept maps as a maps source: a session whose probes capture user stacks keeps
// the address space of each process they hit (kmod/mm_pin.c), so that its maps can be read
// after the process exited (MAPS_GET, Client::takeMaps). KernelMapsSource asks for them
// through a probe of the session, for UserSymbolizer::setMapsSource and
// SnapshotStacks::setMapsSource, and keeps the session's count of hits whose address space
// was not kept (the table was full), for kernelStacksSummary and userSnapshotSummary.
//
// MAPS_GET takes a probe id because the table belongs to the session: any probe of it will
// do, and the caller says which one it saw last (setProbe). Until one is known there is
// nothing to ask through, and the source answers none (the symbolizer reads /proc).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "probectl/client.hpp"
#include "probectl/result.hpp"
#include "probectl/user_stacks.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

class KernelMapsSource {
  public:
    // What a request is: Client::takeMaps's contract (the text of the address space kept
    // for `image`, or with tgid 0 none; `*unpinned` set from the reply).
    using Take = std::function<Result<std::string>(std::uint32_t probe_id, UserImage image,
                                                   std::uint64_t* unpinned)>;

    // Connects a Client of its own, sized for dump replies, so that maps can be read from
    // inside another Client's event callback. Errors: Client::connect's (ENOENT: the module
    // is not loaded; EPERM: not allowed).
    static Result<KernelMapsSource> open();
    // Asks through `client`, which is not owned and must outlive this object (KernelStacks
    // shares its socket).
    explicit KernelMapsSource(Client& client);
    // Asks through `take` (tests; another transport).
    explicit KernelMapsSource(Take take);
    KernelMapsSource(KernelMapsSource&&) noexcept;
    KernelMapsSource& operator=(KernelMapsSource&&) noexcept;
    ~KernelMapsSource();

    // The probe of the session to ask through from now on (the latest event's, or the last
    // one whose stacks were read). 0 keeps the one set before.
    void setProbe(std::uint32_t probe_id);
    // The probe asked through; 0 while none was set.
    std::uint32_t probe() const;

    // The /proc/PID/maps text of the address space the kernel kept for `image` (which the
    // kernel then lets go, that one alone), updating unpinned(). nullopt, without asking,
    // when no probe is set yet or image.maps_seq is 0 (the hit kept none); nullopt when
    // the request fails: not kept or already read (ENOENT: read /proc instead), a session
    // that captures no user stacks (EINVAL), a socket error. The error itself is not kept:
    // every failure means the same to the caller, fall back to /proc.
    std::optional<std::string> maps(UserImage image);
    // Asks the kernel for the counter only (no address space is let go) through the probe
    // set, and returns unpinned(). Without a probe, or when the request fails, the count
    // stays what it was.
    std::uint64_t refreshUnpinned();
    // Hits of the session whose process's address space the kernel could not keep, as of
    // the last successful request (0 before one).
    std::uint64_t unpinned() const;

    // maps() as a UserSymbolizer::MapsSource. The function refers to this object's state,
    // which moves with it: it stays valid across moves and until this object is destroyed.
    UserSymbolizer::MapsSource source();
    // The same for SnapshotStacks::setMapsSource, whose calls name the probe of the event
    // being unwound: setProbe(probe_id), then maps(tgid).
    std::function<std::optional<std::string>(std::uint32_t probe_id, UserImage image)>
    probeSource();

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace probectl
#pragma GCC visibility pop
