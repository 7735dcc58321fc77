// Kernel stacks: the ids `$kstack` fetch arguments carry (fetch_spec.hpp), the session's stack
// map they index (STACK_GET, kmod/uapi/probectl.h: struct probectl_stack), and their frames as
// text, symbolized from /proc/kallsyms ("do_sys_openat2+0x5", "ext4_file_open+0x1c [ext4]").
//
// A session's stack map is filled by the probe handlers and read out by id; ids stay valid
// for the session's life. The same stack may have two ids (two CPUs inserted it at once):
// compare frames, not ids, when merging. Id 0 means the map did not keep the stack (full).
//
// User stacks (`$ustack`, frame pointers) share the map: a KernelStack with `user` set holds
// the addresses of process `tgid`, symbolized through its maps (user_stacks.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "probectl/aggr.hpp"
#include "probectl/client.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/result.hpp"
#include "probectl/user_stacks.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// One STACK_GET reply message. Members are named after the spec's attributes
// (Documentation/netlink/probectl.yaml), which the generated decoder fills.
struct StackReply {
    std::uint32_t id = 0;               // the probe asked about
    std::uint32_t stack_count = 0;      // stacks in the session's map
    std::uint64_t stack_lost = 0;       // hits whose stack was not kept (map full, nesting)
    std::uint64_t stack_truncated = 0;  // hits whose stack had more frames than asked for
    // Whole stacks: struct probectl_stack (id, nr, flags, tgid), then nr u64 frames.
    std::vector<std::uint8_t> stack_entries;
};

// One MAPS_GET reply message (Client::takeMaps), members named after the spec's attributes.
struct MapsReply {
    std::uint32_t id = 0;
    std::uint32_t maps_tgid = 0;
    std::uint32_t maps_seq = 0;
    std::uint64_t maps_unpinned = 0;      // hits whose address space was not kept
    std::vector<std::uint8_t> maps_text;  // a piece of the /proc/PID/maps text
};

// One stack of the map: return addresses, innermost first (the first is the probed location).
struct KernelStack {
    std::uint32_t id = 0;
    bool truncated = false;  // more frames than the depth asked for: the outermost are cut
    bool user = false;       // a user stack ($ustack) of process `tgid`
    std::uint32_t tgid = 0;  // user stacks; 0 also when the probe hit outside a user task
    // User stacks: the address space the kernel kept for it (UserImage), 0 when none was
    std::uint32_t maps_seq = 0;
    std::vector<std::uint64_t> frames;
};

// Decodes one reply's stack_entries, appending to `out`. Errors: EBADMSG for a stack that
// runs past the end (the stacks before it are kept).
Result<void> decodeKernelStacks(std::span<const std::uint8_t> entries,
                                std::vector<KernelStack>& out);

// A frame as text: "SYMBOL+0xOFF" (vmlinux) or "SYMBOL+0xOFF [MODULE]", "SYMBOL" at offset 0;
// "0xADDR" when `symbols` is null or has no function there (or hides addresses).
std::string kernelFrameText(const KernelSymbols* symbols, std::uint64_t addr);

// Folded-stack text (flame-graph input, Brendan Gregg's stackcollapse format): the frames
// root first, joined by ';', then a space and the count. `frames` are innermost first, as a
// KernelStack's. A ';' inside a frame becomes ':' so the line still splits right.
std::string foldedStack(std::span<const std::string> frames, std::uint64_t count);

// What the frames of a stack print as: each frame's text, then "..." for a truncated stack.
std::vector<std::string> kernelStackLines(const KernelSymbols* symbols, const KernelStack& stack);

// What the frames of a user stack print as: UserSymbolizer::frameLines of each (captured
// maps of stack.tgid) with UserSymbolizer::tailCallLines between them, then "..." for a
// truncated stack; "[no user stack]" for a stack of no frames (the probe hit in a kernel
// thread).
std::vector<std::string> userStackLines(UserSymbolizer& symbols, const KernelStack& stack);

// The name of the fetch argument appendKernelStackArg adds (EventFormat::kernel_stack prints
// a trailing value of that name as a stack).
inline constexpr const char* kKernelStackArg = "kstack";

// Appends the fetch argument `kstack=$kstackN` (N = depth; 0: the default depth) to a
// kprobe, kretprobe or tracepoint request and its fetch arguments, after the others (for a
// kretprobe: read at the return), for SessionOptions::prepare. A syscall's kretprobe (a
// syscall: spec, or a kretprobe on its __x64_sys_ wrapper) reads it at the entry instead,
// where the wrapper is on the stack: after the entry reads in the record (the Session tells
// the strace plan, SyscallPlan::entry_extra), and among `args` after the ones read there.
// Errors (EINVAL, marked usage): another kind (the kernel stack of a uprobe is the
// breakpoint's handling, not the program), an argument already named `kstack`, too many
// arguments.
Result<void> appendKernelStackArg(ProbeRequest& req, std::vector<FetchArg>& args,
                                  std::uint32_t depth);

// The name of the fetch argument appendUserStackArg adds (printed like kKernelStackArg).
inline constexpr const char* kUserStackArg = "ustack";

// Appends the fetch argument `ustack=$ustackN` (N = depth; 0: the default depth) to a
// request of any kind and its fetch arguments, after the others. A uprobe at a function's
// first instruction (ProbeRequest::function_entry) gets the function-entry flag, so that
// the caller is not skipped. Errors (EINVAL, marked usage): an argument already named
// `ustack`, too many arguments.
Result<void> appendUserStackArg(ProbeRequest& req, std::vector<FetchArg>& args,
                                std::uint32_t depth);

// DWARF mode: appends the fetch argument `ustack` that copies the user registers and `bytes`
// (1..kUstackSnapshotMax; 0: kUstackSnapshotDefault) of user stack at every hit, unwound on
// the host (UserSymbolizer::snapshotLines; EventFormat::user_snapshot prints it). Any kind.
// Errors (EINVAL, marked usage): `bytes` out of range, an argument already named `ustack`,
// too many arguments.
Result<void> appendUserStackSnapshotArg(ProbeRequest& req, std::vector<FetchArg>& args,
                                        std::uint32_t bytes);

// Sets the function-entry flag on the $ustack loads of `req` when the request is a uprobe
// at a function's first instruction (ProbeRequest::function_entry); the session does it for
// every request after SessionOptions::prepare.
void markUserStackEntry(ProbeRequest& req);

// The stack map of a session, read through its own netlink socket (so it may be read from
// inside another Client's event callback) and kept symbolized: ids seen once are not read
// again.
class KernelStacks {
  public:
    // Connects. `symbols` (not owned; must outlive this) symbolizes; nullptr: /proc/kallsyms
    // is loaded on the first read that needs it (frames stay addresses if that fails).
    static Result<KernelStacks> open(const KernelSymbols* symbols = nullptr);
    KernelStacks(KernelStacks&&) noexcept;
    KernelStacks& operator=(KernelStacks&&) noexcept;
    ~KernelStacks();

    // STACK_GET through probe `probe_id` (any probe of the session with a stack map):
    // adds the stacks not seen yet. Errors: the kernel's (EINVAL: no stack map).
    Result<void> read(std::uint32_t probe_id);
    // The lines of stack `id` (kernelStackLines), reading the map once more when `id` is
    // new; nullptr for id 0 (the map did not keep the stack). An id the map could not be read
    // for has one line saying so and why ("[stack ID not read: REASON]").
    const std::vector<std::string>* lines(std::uint32_t probe_id, std::uint32_t id);
    // The stack itself, once read; nullptr when unknown.
    const KernelStack* stack(std::uint32_t id) const;
    // Keeps /proc's maps of process `tgid` for its user stacks whose address space the
    // kernel did not keep (maps_seq 0; UserSymbolizer::capture): call it as soon as a process
    // is seen. The others are named with the address space kept for each (a KernelMapsSource
    // through `probe_id`, or through the probe of the last read) when their lines are made.
    void captureProcess(pid_t tgid, std::uint32_t probe_id = 0);
    // read(probe_id), then captures the maps of each user stack's address space seen for the
    // first time: a count calls it now and then so that the maps of short-lived processes
    // are kept.
    Result<void> readAndCapture(std::uint32_t probe_id);
    // Whether some stack read so far is a user stack.
    bool hasUserStacks() const;
    // The map's counters as of the last read.
    std::uint32_t count() const;
    std::uint64_t lost() const;
    std::uint64_t truncated() const;
    // Hits whose process's address space the kernel could not keep (its table was full), as
    // of the last read that saw user stacks.
    std::uint64_t unpinned() const;

  private:
    struct Impl;
    explicit KernelStacks(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// A table keyed by kstack and/or ustack (aggr.hpp: AggrSpec keys "kstack", "ustack") with its
// stacks: one row per distinct stack and other keys (the same frames under two ids are
// merged), most hits first. With both keys a row's lines are the kernel stack's, then the
// user stack's ("[stack not kept]" for one the map did not keep).
struct StackRow {
    std::vector<std::string> keys;   // the other keys' texts, in key order
    std::vector<std::string> lines;  // the frames (k/userStackLines); empty when none kept
    std::uint32_t id = 0;            // one of the stack's ids (0: not kept, map full)
    std::uint64_t count = 0;
};
// `lines` gives a stack's lines by (probe id, stack id), as KernelStacks::lines does.
using StackLines =
    std::function<const std::vector<std::string>*(std::uint32_t probe_id, std::uint32_t id)>;
std::vector<StackRow> stackRows(const AggrTable& t, const StackLines& lines);
// The names of a table's keys that are not stacks (StackRow::keys), in key order.
std::vector<std::string> stackRowKeyNames(const AggrTable& t);
// The rows as text: each stack's frames, indented, then its count and other keys. With
// `key_names` (stackRowKeyNames) a header names those columns ("  COUNT  COMM") and each
// count line is aligned under it.
std::string formatStackRows(const std::vector<StackRow>& rows, std::size_t top = 0,
                            const std::vector<std::string>& key_names = {});
// A row's frames innermost first: its lines ("[stack not kept]" for a stack the map could
// not hold), then its other keys, the first key outermost.
std::vector<std::string> stackRowFrames(const StackRow& row);
// The rows as folded stacks (flame-graph input): the other keys as the outermost frames,
// then the stack root first; "[stack not kept]" for a stack the map could not hold. A
// non-empty `root` is one more frame below all of them, as flameStacks's.
std::string formatFoldedRows(const std::vector<StackRow>& rows,
                             const std::string& root = std::string());

// The map's counters as the end of a trace or count shows them: "kernel stacks: N kept, M
// truncated (deeper than --stack-depth), K lost (stack map full)"; "stacks: ..." when the
// map holds user stacks too.
std::string kernelStacksSummary(const KernelStacks& stacks);

// --ustack=dwarf at the end of a trace: of the snapshots unwound, how many stopped before
// the outermost frame ("[unwind stopped: ...]") and how many filled all `bytes` of the copy:
// "user stacks (dwarf): N unwound, S stopped early, T filled the 3072-byte copy", then, only
// when some walk stopped where its copy ended (a larger --stack-size reaches further),
// ", C stopped at its end (--stack-size can take more)". `unpinned`: hits whose process's
// maps the kernel could not keep (KernelMapsSource::unpinned), noted when not 0, as
// kernelStacksSummary does.
std::string userSnapshotSummary(const SnapshotWalks& walks, std::uint32_t bytes,
                                std::uint64_t unpinned = 0);

}  // namespace probectl
#pragma GCC visibility pop
