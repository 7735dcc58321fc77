// Wildcard specs: `kprobe:vfs_*`, `kretprobe:GLOB`, `syscall:GLOB`, `tracepoint:SUBSYS:GLOB`,
// `uprobe:PATH:GLOB`, `uretprobe:PATH:GLOB` (hasGlob, probe_spec.hpp) become one spec per
// matching name. Names that cannot be probed are skipped with the reason, not fatal: one
// blacklisted function among hundreds must not end the trace. Only "none attached" is an
// error, and it names the glob.
//
//   SpecExpander x(pid);
//   auto r = x.attach(tracer, spec);   // AttachReport: ids, matched, skipped
//   if (r && r->glob) std::cerr << r->summary() << '\n';
//   // "kprobe:vfs_*: attached 180 of 196; 16 refused: 9 blacklisted, 7 data"
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "probectl/kernel_symbols.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/result.hpp"
#include "probectl/tracepoints.hpp"
#include "probectl/tracer.hpp"
#include "probectl/user_target.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// A name a glob matched that has no probe, and why.
struct SkippedName {
    std::string name;
    // One word class for the summary: "blacklisted", "data", "duplicate", "padding",
    // "init code" (vmlinux's init text, freed after boot),
    // "ifunc", "alias" (another matched name of the same address is probed), "attached
    // twice" (an earlier spec has it), "never returns" (exit and exit_group, asked for
    // latency, $retval or $errno), "refused by probectl" (its own check of the spec: a
    // usage error), "refused by the kernel" (or by ptrace: the backend's refusal).
    std::string reason;
    // the error's text for a refusal, "same address as NAME" for an alias
    std::string detail;
};

struct Expansion {
    std::vector<ProbeSpec> specs;      // one per name to probe, in name order
    std::vector<SkippedName> skipped;  // matched but not to probe
    // The spec's name has glob characters but names a function exactly (a C++ signature
    // with a pointer, "ns::g(char*)"): it is that one function, `specs` the spec itself.
    bool exact = false;
    std::size_t matched() const { return specs.size() + skipped.size(); }
};

struct AttachReport {
    std::string spec;   // the spec as given
    bool glob = false;  // it was a glob (summary() then says what happened to each name)
    std::vector<std::uint32_t> ids;
    std::size_t matched = 0;
    std::vector<SkippedName> skipped;  // before the kernel was asked, and refused by it
    // The tracer's notes on what it attached (Tracer::takeNotes), for the user to read.
    std::vector<std::string> notes;
    // SpecExpander::stopWhen() ended the attaching before every name was tried (those left
    // are in neither ids nor skipped).
    bool stopped = false;
    // "SPEC: attached A of M; 2 aliases (same address as another name, probed once);
    // R refused: 12 blacklisted, 3 data, 2 never return (exit, exit_group), 1 refused by the
    // kernel" (and "; stopped: N not tried" when stopped).
    std::string summary() const;
    // One line per skipped name: "  NAME: REASON[: DETAIL]".
    std::string details() const;
};

class SpecExpander {
  public:
    // pid: user-space paths and library names as that process sees them (0: as we do).
    // symbols: a loaded table to use (not owned), or null to load /proc/kallsyms once.
    // cache: where user-space globs' expansions are kept to give again (null: none kept).
    explicit SpecExpander(pid_t pid = 0, const KernelSymbols* symbols = nullptr,
                          std::shared_ptr<UserResolveCache> cache = nullptr);
    SpecExpander(SpecExpander&&) noexcept;
    SpecExpander& operator=(SpecExpander&&) noexcept;
    ~SpecExpander();

    // The names `spec` matches, as specs, and the ones skipped. A spec without a glob comes
    // back as itself. Errors: no name matches (ENOENT, naming the glob), the sources
    // (kallsyms, tracefs, the ELF file) cannot be read.
    Result<Expansion> expand(const ProbeSpec& spec);
    // expand(), then tracer.add() for each spec; a name refused is skipped ("refused by the
    // kernel", "refused by probectl", "never returns": SkippedName) and the rest go on. A name an
    // earlier attach() of this expander attached is skipped as "attached twice". Errors: a spec
    // without a glob fails as tracer.add() does; a glob fails only when nothing attached (the first
    // refusal's errno and text).
    Result<AttachReport> attach(Tracer& tracer, const ProbeSpec& spec);
    // The names the last attach() skipped when it failed because a glob attached none of
    // them, as AttachReport::details() lists them; "" after any other attach().
    const std::string& failedDetails() const;
    // Asked between the names of a glob: true ends attach() there (AttachReport::stopped), as
    // a stop signal must, for a glob of thousands of names takes seconds to attach.
    void stopWhen(std::function<bool()> stop);

    // The kernel symbol table (loaded on first use; null when /proc/kallsyms is unreadable).
    const KernelSymbols* symbols();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace probectl
#pragma GCC visibility pop
