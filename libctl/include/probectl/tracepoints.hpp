// Kernel tracepoints as probectl sees them: which exist in vmlinux (and which belong to
// modules), the trace-event subsystem each is filed under, and each one's prototype.
//
// Sources, each optional:
//  - /proc/kallsyms: a `__tracepoint_NAME` data symbol per tracepoint; "[module]" marks a
//    module's. Names are readable without root (addresses are not, and are not needed).
//  - tracefs (events/SUBSYS/EVENT directories): the subsystem. The struct tracepoint knows
//    only its name; the subsystem is a trace-event notion. Looked for at /sys/kernel/tracing,
//    then /sys/kernel/debug/tracing; when neither is mounted and the caller may, tracefs is
//    mounted at /sys/kernel/tracing (left mounted, as perf and trace-cmd do). Without it,
//    SUBSYS is not checked: tracepoint:*:EVENT or any SUBSYS is taken at its word.
//    Tracepoints with no trace event (DECLARE_TRACE only, e.g. pelt_cfs_tp) have no
//    subsystem: write them tracepoint:*:NAME.
//  - BTF (/sys/kernel/btf/vmlinux, read with libbpf): the typedef btf_trace_NAME is a
//    pointer to the probe's prototype void (*)(void *data, args...): the argument types.
//    Names come from the FUNC __probestub_NAME (6.5+) or __bpf_trace_CLASS (a function per
//    event class with the same prototype, matched by its argument types).
//
// What the kernel module can read (kmod/tracepoint.c): the first six arguments, each a full
// register or stack word, correct when each of them is an integer, enum or pointer of at
// most 8 bytes; a struct or float argument shifts every later one. Such arguments, and any
// after the sixth, are marked unreadable and refused by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/fetch_spec.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/result.hpp"

struct btf;

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct TracepointParam {
    std::string name;            // from BTF; "" when BTF has no name for it
    std::string type;            // C spelling: "struct task_struct *", "pid_t", "bool"
    std::uint32_t size = 0;      // bytes of the (resolved) type
    bool readable = false;       // one of the first six, integer/enum/pointer <= 8 bytes
    std::string why_unreadable;  // when !readable
    FetchType default_type = FetchType::X64;  // as a fetch argument: sN/uN, string, x64
    std::uint32_t btf_id = 0;                 // the parameter's type in the BTF
};

struct TracepointInfo {
    std::string name;        // struct tracepoint name, e.g. "sched_process_fork"
    std::string subsystem;   // tracefs events/SUBSYS; "" when unknown or none
    std::string module;      // "" for vmlinux
    bool has_proto = false;  // params come from BTF
    std::vector<TracepointParam> params;

    // "tracepoint:sched:sched_process_fork" ("*" for an unknown subsystem)
    std::string spec() const;
    // "struct task_struct * parent, struct task_struct * child" style, or "?" without BTF;
    // `symbols` prints this as name:type pairs.
    std::string protoStr() const;
};

struct TracepointSources {
    std::string kallsyms = "/proc/kallsyms";  // "" to skip
    // tracefs mount point; "" = find it (and mount it when `mount_tracefs` and permitted)
    std::string tracefs;
    bool mount_tracefs = true;
    std::string btf = "/sys/kernel/btf/vmlinux";  // "" to skip
};

class Tracepoints {
  public:
    // Reads whatever sources exist. Errors only when none of them gives any tracepoint.
    static Result<Tracepoints> load(const TracepointSources& src = {});

    const std::vector<TracepointInfo>& all() const { return list_; }
    // Tracepoints whose subsystem and name match the globs (glob.hpp syntax); a tracepoint
    // with no known subsystem matches only the subsystem glob "*".
    std::vector<const TracepointInfo*> match(std::string_view subsys_glob,
                                             std::string_view name_glob) const;

    // The tracepoint a tracepoint: spec names. Errors (EINVAL/ENOENT) name it: unknown
    // (with close names), a module's tracepoint, a SUBSYS it is not filed under, a trace
    // event that is no tracepoint (syscalls:sys_enter_*, kprobe events).
    Result<const TracepointInfo*> find(const ProbeSpec& spec) const;

    // Rewrites args.NAME[->FIELD...] into $argN and dereferences by the BTF's member
    // offsets, gives arguments without a TYPE the BTF's (char * and char[N]: string;
    // signed/unsigned integers: sN/uN; other pointers: x64), and refuses $argN and names
    // the probe cannot read (see above), bitfields, and members of non-structs. Without BTF,
    // args.NAME is refused and $argN passes unchanged.
    Result<std::vector<FetchArg>> resolveArgs(const TracepointInfo& tp,
                                              std::vector<FetchArg> args) const;

    // Fetch arguments that show every readable parameter by name with its default type
    // (what `trace` records when a tracepoint spec gives none); empty without BTF.
    std::vector<FetchArg> defaultArgs(const TracepointInfo& tp) const;

    bool hasBtf() const { return btf_ != nullptr; }
    bool hasTracefs() const { return !tracefs_.empty(); }
    const std::string& tracefs() const { return tracefs_; }

  private:
    std::vector<TracepointInfo> list_;
    std::shared_ptr<struct btf> btf_;
    std::string tracefs_;
};

}  // namespace probectl
#pragma GCC visibility pop
