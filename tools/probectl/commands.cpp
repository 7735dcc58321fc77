// The command table: name, one-line summary, help with examples, options, entry point.
// Adding a subcommand = one file + one row here. The help of record, report, list, remove,
// enable and disable is their man page's (man_help.hpp, made from Documentation/man by
// tools/man2help.awk); the others keep a longer text of their own here.
#include "aggr_cli.hpp"
#include "cli.hpp"
#include "man_help.hpp"
#include "subcommands.hpp"

#include <string>

#include "probectl/probe_kinds.hpp"

namespace probectl::cli {

namespace {

const char* const kTraceHelpHead =
    R"(Usage: probectl trace SPEC... [-p PID]... [-f] [--pid|--tid|--uid LIST] [--comm GLOB]
                      [--maxactive N] [--force] [--format text|json] [-o FILE]
                      [--duration TIME] [-v] [--kstack] [--ustack[=fp|dwarf]] [--stack-depth N]
                      [--stack-size BYTES] [--zeros]
                      [--backend kernel|ptrace [--seccomp-bpf]] [-- CMD [ARGS...]]
       probectl trace --syscalls=NAME[,NAME...]|all [-c] [OPTIONS] [-- CMD [ARGS...]]

Adds the probes for as long as this command runs and prints one line per event:
time (s) since every probe was armed (an event from a probe armed before the last
one can show a small negative time), [cpu], comm, pid, probe, then the six argument
registers (arg1..arg6, hex: what $arg1..$arg6 fetch) or, for return probes, the
return value and the time spent in the function. A syscall:NAME probe prints the
call as strace does, one line per call with its arguments (paths and buffers read
by the kernel) and its return value: openat(AT_FDCWD, "/etc/passwd",
O_RDONLY|O_CLOEXEC) = 3. At the end (command exit, Ctrl-C, SIGTERM, SIGHUP or --duration)
it prints per-probe counters:
  HITS       the probe ran (and passed the process filter)
  DELIVERED  records this command received
  DROPPED    records the kernel could not buffer or send
  NMISSED    calls the kernel could not record (reentry, too few kretprobe
             instances: not in HITS; uretprobe returns whose entry was not kept)
  FILTERED   runs skipped by the process filter (-p/CMD, --pid --tid --uid --comm);
             not counted in HITS
  REJECTED   hits the spec's `if` predicate rejected
  UNRETURNED return probes: entries with no return (longjmp, exception, thread
             exit, still inside at the end): HITS = DELIVERED + DROPPED +
             REJECTED + UNRETURNED
and a warning whenever anything was lost. Of several probes (a glob's), those whose
counters are all 0 are left out and counted in one line (--zeros lists them).

With -- CMD, CMD is started held before exec, the probes are added with a filter on
its pid, then it runs; the trace ends when it exits (if the trace ends first, CMD
gets SIGTERM on --duration, and the same signal on Ctrl-C, SIGTERM or SIGHUP). CMD also
dies if probectl is killed.
With -p, exactly those processes are traced (not their children; add -f for their
children, those running already and those forked from now on, across exec, like
strace -f). -p and -- CMD
together trace both. Without either, every process is traced until Ctrl-C or
--duration. Uprobes are armed only in the traced processes: others running the
same code are neither recorded nor slowed down.

Where the trace goes: with -- CMD and no -o on stderr, as strace's does (CMD's own
output stays on stdout); without a command on stdout; with -o in FILE, opened once
every probe is armed (a refused spec leaves it as it was). A return value whose
upper half is zero and bit 31 set also shows its int reading: ret=4294967291
(0xfffffffb, int -5).

--syscalls=openat,read traces those syscalls (syscall:openat syscall:read) and
prints nothing but strace's lines, pid-prefixed with -f like strace -f -o FILE;
the counters go to stderr. It is the in-kernel `strace -e trace=openat,read`:
  probectl trace --syscalls=openat -o trace.log -- ls -al
  strace -o trace.log -e trace=openat ls -al
write the same lines (the kernel reads paths at entry, buffers up to 64 bytes).
exit and exit_group never return: they print "= ?" as in strace. A traced process's
end prints as strace's "+++ exited with 0 +++" or "+++ killed by SIGKILL +++" line:
with --backend=ptrace each traced thread's; the kernel backend knows only CMD's own
end (none for forked children or -p processes).
--syscalls=all traces every syscall. -c (strace -c -w) prints no lines but, at the
end on stderr, strace's table: % time, seconds (each call's entry-to-return wall
time, as strace -w sums it; plain strace -c sums system CPU time), usecs/call,
calls, errors (calls that returned -4095..-1), syscall, by time, and a total row. The kernel keeps each
syscall's counts and times per errno in probectl.ko's maps (no record per call:
nothing is dropped at any rate); calls it could not count are said under the table.
As in strace -c, exit and exit_group (they never return) have no row.
  sudo probectl trace --syscalls=all -c -- ls -l /usr

A glob in the name (kprobe:vfs_*, kretprobe:GLOB, syscall:GLOB,
tracepoint:SUBSYS:GLOB, uprobe:PATH:GLOB, uretprobe:PATH:GLOB; * ? [a-z]) adds one
probe per matching name. Names that cannot be probed (blacklisted, data, duplicate
or refused by the kernel) are skipped and summed up in one line on stderr
("kprobe:do_sys*: attached 8 of 9; 1 refused: 1 blacklisted"); -v lists each.
Only a glob that attaches nothing is an error.

SPEC is TYPE:LOCATION, one of:
)";

const char* const kTraceHelpTail =
    R"(PATH is a file or a library name (libc); 'probectl symbols PATH' lists what it
offers and 'probectl resolve SPEC' shows the file offset a spec comes to. A bare
0xN is a file offset; elf=0xN is an address as readelf prints it; va=0xN is a
runtime address in the process given with -p.

Fetch arguments follow the location, in the kprobe_events language:
  NAME=SOURCE[:TYPE]   SOURCE: $argN (1..6) $retval $comm $pid $tid $uid $cpu %REG
                       $stackN +OFFS(SOURCE) (dereference, nestable) +uOFFS(SOURCE)
                       TYPE: u8..u64 s8..s64 x8..x64 string ustring, TYPE[N]
A read that fails prints <fault>. $argN works at function entry and in return
probes (the entry arguments are saved); USDT probes fetch their own arg1..argN.

Kernel tracepoints: tracepoint:SUBSYS:EVENT (or t:), a vmlinux tracepoint, SUBSYS
as in tracefs events/SUBSYS/EVENT ('*' for one without a trace event). Records
carry its first six raw arguments as $arg1..$arg6. With the kernel's BTF
(/sys/kernel/btf/vmlinux) parameters also go by name, args.NAME, struct members
by args.NAME->FIELD, each with its type as the default (char *: string); without
fetch arguments every parameter is printed by name. %REG and $stackN do not apply.
'probectl symbols tracepoint:sched:*' lists tracepoints with their arguments.
--format json writes JSON Lines: one object per event, then a summary object.

Filters run in the kernel, before a record takes any buffer space:
  SPEC ... if EXPR   a predicate per probe, after its fetch arguments (as in ftrace
                     triggers). EXPR compares a fetch argument NAME (or a USDT
                     probe's arg1..argN), $pid $tid $uid $cpu $comm, or $retval
                     in return probes (kretprobe, uretprobe, syscall), with a literal:
                     integers: == != < <= > >= and & (any bit set); signed for s* types
                     strings:  == != (exact; a literal with * ? [ globs, as ftrace),
                               ~ !~ (glob: * ? [a-z] [!x])
                     combined with && || ! and parentheses. A read that faulted makes
                     its comparison false.
  --pid, --tid, --uid LIST, --comm GLOB   session filters on the task, on top of what
                     is traced (-p, -- CMD or everything). Unlike -p (long form
                     --attach), --pid resolves nothing in the process and arms uprobes
                     everywhere: it only keeps that process's hits.
The ptrace backend evaluates the same `if` predicates (only $pid $tid $uid $cpu
$comm $retval there: it has no fetch arguments) and refuses the session filters.
Quote each spec whole in single quotes: fetch arguments and `if` belong inside them,
and the shell would expand their $... otherwise. String literals take double quotes.

Exit status: with -- CMD, as strace: CMD's exit code when it exits, whatever ended
the trace (Ctrl-C, SIGTERM and SIGHUP go on to CMD: one that catches them and exits 0
gives 0); when signal N kills CMD, probectl dies of N too once the output is complete
(a shell says 128+N: 130 for Ctrl-C; no core dump), as it does of a stop signal that
CMD outlives by a second (probectl then kills CMD, and with -f every process of it that
it traces, while tracing them: none is left running); 0 when --duration ended the trace,
and when Ctrl-C, SIGTERM or SIGHUP ends a trace without CMD (-p, or system-wide); 2
when the command line is wrong (whichever part of probectl finds it: a predicate on a
USDT probe's arguments is checked once its note is read); 1 when the system refused
(kernel, module, symbols, files, processes).
A stop signal while the probes are still being attached ends the attaching: with
-- CMD, CMD is not run and probectl dies of the signal; without, the run ends at once.
SIGHUP is left alone when it is ignored already (nohup).
A failed write to stdout or stderr (a full disk) makes 0 into 1 (stdout's is said on
stderr).

Examples:
  sudo probectl trace syscall:openat -- ls -al
  sudo probectl trace --syscalls=openat,read,write,close -o trace.log -- cat /etc/hostname
  sudo probectl trace --syscalls=openat -f -- sh -c 'cat /etc/hostname; ls /tmp'
  sudo probectl trace --syscalls=all -c -- ls -l /usr
  sudo probectl trace syscall:openat syscall:execve -- sh -c 'cat /etc/hostname'
  sudo probectl trace kretprobe:do_sys_openat2 --maxactive 64 -- cat /etc/hostname
  sudo probectl trace kprobe:do_nanosleep -p 1234 -p 1235 --duration 10s
  sudo probectl trace 'kprobe:vfs_*' -v --duration 2s
  sudo probectl trace syscall:getppid --duration 500ms
  sudo probectl trace 'kprobe:vfs_read+4' -o /tmp/reads.txt
  sudo probectl trace 'syscall:openat path=+0($arg2):ustring' -- cat /etc/hostname
  sudo probectl trace 'kretprobe:do_sys_openat2 fd=$retval:s32' --format json -- ls
  sudo probectl trace uprobe:libc:malloc -- /usr/bin/ls    # a dynamically linked ls
  sudo probectl trace 'uretprobe:libc:malloc size=$arg1 ptr=$retval' -f -- sh -c '/usr/bin/ls / | wc -l'
  sudo probectl trace usdt:libstdc++:libstdcxx:throw -p 1234   # C++ exceptions thrown
  sudo probectl trace 'syscall:openat path=+0($arg2):ustring if path ~ "/etc/*" && $comm == "cat"' \
                      -- sh -c 'cat /etc/hostname /proc/version >/dev/null'
  sudo probectl trace 'uprobe:./app:pc_add a=$arg1:s64 if a >= 4 && a <= 6' -- ./app calls 10
  sudo probectl trace 'usdt:./app:pc:tick if arg2 > 4' -- ./app usdt 3
  sudo probectl trace syscall:getppid --uid 1000 -- ./getppid_loop 5   # FILTERED 5 as root
  sudo probectl trace syscall:getppid --comm 'getppid_*' -f -- sh -c './getppid_loop 5; ./app libc 3'
  sudo probectl trace tracepoint:sched:sched_process_fork -f -- sh -c 'ls | wc -l'
  sudo probectl trace 'tracepoint:sched:sched_process_exec file=args.bprm->filename' -f -- sh -c ls
  sudo probectl trace 'tracepoint:task:task_rename comm=+0($arg2):string' -f -- sh -c ls
)";

const char* const kAddHelpHead = R"(Usage: probectl add SPEC [--persist] [--maxactive N] [--force]

Adds one probe and prints its id. A probe belongs to the socket that added it: without
--persist it is removed again when this command exits, so plain `add` only checks
that the kernel accepts SPEC. With --persist it stays (counting hits, see
'probectl list') until 'probectl remove ID' or rmmod; its records go nowhere, so
fetch arguments and `if` are refused (probectl trace, count and hist show values).

SPEC is TYPE:LOCATION, one of:
)";

const char* const kAddHelpTail = R"(
Examples:
  sudo probectl add kprobe:do_nanosleep --persist
  sudo probectl add kretprobe:do_sys_openat2 --maxactive 32 --persist
  sudo probectl add kprobe:0xffffffff81234560          # check an address is accepted
  sudo probectl add uprobe:libc:malloc --persist       # count malloc calls system-wide
)";

// The list of kinds comes from the kind table (probe_kinds.hpp).
const std::string kTraceHelp = kTraceHelpHead + kindsHelp() + kTraceHelpTail;
const std::string kAddHelp = kAddHelpHead + kindsHelp() + kAddHelpTail;

const char* const kResolveHelp =
    R"(Usage: probectl resolve SPEC [--kallsyms FILE] [--blacklist FILE] [-p PID]

Shows what SPEC points at without adding anything: symbol, module, address, what
would be registered, and whether it can be probed, and if not why (unknown symbol,
with suggestions; several functions of that name; kprobes blacklist; not a
function). Exit status 1 when it cannot be probed. SPEC is one probe: a glob is
refused (exit 2); probectl symbols lists its matches.

For user-space specs it shows the file the kernel will open, the FILE OFFSET of
the probed instruction (what a uprobe is registered at), the function, its ELF
address (as readelf/objdump print it), a USDT probe's semaphore offset and
decoded arguments, and each step of the computation. No kernel module needed.
  uprobe:PATH:FUNCTION[+OFF]  uretprobe:PATH:FUNCTION  usdt:PATH:[PROVIDER:]NAME
  uprobe:PATH:0xN or off=N    N is a file offset in PATH
  uprobe:PATH:elf=N           N is an ELF address (readelf -s, nm, objdump)
  uprobe:PATH:va=N            N is an address in the running process -p PID
PATH is a file path or a library name (libc, libssl.so.3), found like the
dynamic linker does; with -p, as that process sees it (its mappings, its mount
namespace). With -p a bare 0xN is refused as ambiguous: write off= or va=.
Quote C++ names and paths with ':' inside the spec: uprobe:/bin/x:'ns::f(int)'.

Examples:
  sudo probectl resolve syscall:execve
  sudo probectl resolve kprobe:do_sys_openat2+0x14
  sudo probectl resolve kprobe:0xffffffff81234560
  probectl resolve uprobe:libc:malloc
  probectl resolve "uretprobe:/usr/bin/prog:'ns::parse(char const*)'"
  probectl resolve usdt:/usr/bin/python3:python:function__entry
  sudo probectl resolve uprobe:libc:va=0x7f3a5c29e930 -p 1234
)";

const char* const kSymbolsHelp =
    R"(Usage: probectl symbols GLOB [--functions] [--kallsyms FILE] [--blacklist FILE]
       probectl symbols PATH[:GLOB] [-p PID]
       probectl symbols tracepoint:SUBSYS_GLOB[:EVENT_GLOB]

Lists kernel symbols whose name matches GLOB (* ? [..]; a bare word matches as a
substring, like grep): address, kallsyms type letter, kind (function/data/...),
module, and whether a kprobe can go there. Addresses need root (kptr_restrict).

With PATH (an argument with a '/' or a ':'; a library name such as libc needs
the colon: 'libc:'), lists that binary's functions matching GLOB (all without
one), demangled: ELF address (as readelf prints it), size, FILE OFFSET (what a
uprobe registers), type (FUNC, or IFUNC: a resolver, not the function), binding
and source file of local functions; then its USDT probes: provider:name, file
offset, semaphore file offset, decoded arguments. No kernel module needed. A GLOB
with glob characters or a parameter list that names a function exactly, as a probe
spec would, lists that function alone: 'ns::g(char*)' not ns::g(char const*) too,
'V::operator[](unsigned long)' its operator.

With tracepoint:SUBSYS[:EVENT] (globs), lists tracepoints: the spec to trace each,
vmlinux or its module (module tracepoints cannot be probed), and its arguments as
name:type from the kernel's BTF ('(unreadable)' when the probe cannot read one:
a struct passed by value, or beyond the sixth). Subsystems come from tracefs,
which is mounted at /sys/kernel/tracing when absent and permitted.

Examples:
  sudo probectl symbols 'sys_getppid*'
  sudo probectl symbols -f '*openat*'
  probectl symbols ext4_file_read --kallsyms saved-kallsyms.txt
  probectl symbols 'libc:mall*'
  probectl symbols /usr/bin/python3:
  probectl symbols '/usr/bin/prog:ns::*'
  probectl symbols '/usr/bin/prog:ns::g(const char*)'
  sudo probectl symbols libssl.so.3:SSL_write -p 1234
  probectl symbols 'tracepoint:sched:*'        # tracepoints, arguments as name:type
  probectl symbols 'tracepoint:*:*fork*'
)";

const char* const kBenchHelp =
    R"(Usage: probectl bench [-n N] [--threads T] [--repeat R] [--tracers LIST] [-o DIR]
                      [--workload PATH] [--no-plot] [--attach N] [--startup R]
                      [--throughput N [--throughput-ring KB]]

Runs the standard workloads (tests/bench/bench_workload) untraced and under every
tracer available here, one after the other, and prints them side by side:
  calls/1t, calls/Tt        N calls of bench_fn(i), probed at its entry (a uprobe)
  syscalls/1t, syscalls/Tt  N getppid() syscalls, probed at __x64_sys_getppid (a kprobe)
The tracers: floor (an ftrace probe without arguments while tracing_on is 0: the trap
and an empty handler), kernel-count (probectl.ko counting hits, no records),
kernel-record (probectl.ko streaming one record per hit with one fetch argument, the
same argument ftrace fetches; kernel-record-deferred reads them only once the workload
has ended, as the ftrace row does), ftrace (kprobe_events/uprobe_events), ptrace (this
tool's ptrace backend; ptrace-seccomp with a seccomp filter), strace and ltrace when
installed. A tracer that cannot run is listed as skipped, with why.

Every workload times its own loop, so start-up and attaching are not counted: --attach
and --startup time those apart (whole commands around one getppid call: the program,
strace, probectl trace syscall:, kprobe: on the syscall and on a function only kallsyms
vets, with the kallsyms cache and without; then probectl's start-up steps; X STRACE
divides by strace's time). --throughput N finds the highest rate (events/s, 4 threads
calling getppid under one kprobe, N calls) at which kernel-record, ftrace-stream and
ftrace-iterate each deliver every record with none lost, all with the same ring per CPU
(--throughput-ring,
64 KiB unless given): unpaced, then with each thread spinning a gap after every call,
the gap grown and bisected (at most 8 paced runs per tracer). Under emulation compare
its ratio within one boot only.
NS/HIT = loop time / N; OVERHEAD = (loop time - untraced loop time) / N;
X KERNEL = OVERHEAD / kernel-record's OVERHEAD on the same workload. Every tracer must
see exactly N hits (EXACT); those that do not are named with what they saw. Then the
headline ratios (kernel vs ptrace, strace and ftrace), and a legend. Writes DIR/bench.csv, DIR/bench.dat and
DIR/bench.gp, and runs gnuplot on it for bench.png and bench.svg when gnuplot is
installed. Needs root (probes, tracefs). Under emulation (QEMU TCG) every figure is
many times the hardware's: compare ratios, not absolutes.

Examples (make bench runs the first in the VM on every test kernel):
  sudo probectl bench -n 10000 --repeat 3 -o /tmp/bench
  sudo probectl bench -n 2000 --tracers ptrace,kernel-record --threads 1
  sudo probectl bench -n 1 --threads 1 --tracers kernel-count --attach 0 --startup 0 \
      --throughput 20000                                     # the throughput rows alone
  probectl bench -n 2000 --tracers ptrace,strace,ltrace    # no module, no root needed
)";

}  // namespace

// trace's options but --format: record writes its own. Its -o is its own too: trace's
// speaks of stdout and of --format ctf, which record has not.
boost::program_options::options_description recordOptionsDescription() {
    namespace po = boost::program_options;
    const po::options_description trace = traceOptionsDescription();
    po::options_description d("Options");
    for (const auto& opt : trace.options()) {
        if (opt->long_name() == "output") {
            d.add_options()("output,o", po::value<std::string>()->value_name("FILE"),
                            "the recording (created or truncated; required, a file, not '-'); "
                            "a write to it that fails (a full disk) stops the recording and "
                            "removes FILE, incomplete");
            continue;
        }
        if (opt->long_name() != "format" && opt->long_name() != "summary-only" &&
            opt->long_name() != "kstack" && opt->long_name() != "ustack" &&
            opt->long_name() != "stack-depth" && opt->long_name() != "stack-size")
            d.add(opt);
    }
    return d;
}

const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"trace", "trace events of probes until a command exits or Ctrl-C", kTraceHelp.c_str(),
         [] { return traceOptionsDescription(); }, runTrace},
        {"count", "count hits in the kernel, per probe or per key (--by comm,pid,...)", kCountHelp,
         [] { return aggrOptionsDescription(AggrMode::Count); }, runCount},
        {"hist", "a log2 or linear histogram of a fetched value, kept in the kernel", kHistHelp,
         [] { return aggrOptionsDescription(AggrMode::Hist); }, runHist},
        {"latency", "entry-to-return time of return probes as a histogram", kLatencyHelp,
         [] { return aggrOptionsDescription(AggrMode::Latency); }, runLatency},
        {"record", kManSummary_record, kManHelp_record, [] { return recordOptionsDescription(); },
         runRecord},
        {"report", kManSummary_report, kManHelp_report, [] { return reportOptionsDescription(); },
         runReport},
        {"add", "add one probe (--persist to keep it)", kAddHelp.c_str(),
         [] { return addOptionsDescription(); }, runAdd},
        {"list", kManSummary_list, kManHelp_list, [] { return listOptionsDescription(); }, runList},
        {"remove", kManSummary_remove, kManHelp_remove, [] { return removeOptionsDescription(); },
         runRemove},
        {"enable", kManSummary_enable, kManHelp_enable, [] { return probeIdOptionsDescription(); },
         runEnable},
        {"disable", kManSummary_disable, kManHelp_disable,
         [] { return probeIdOptionsDescription(); }, runDisable},
        {"resolve", "show what a spec points at and whether it can be probed", kResolveHelp,
         [] { return resolveOptionsDescription(); }, runResolve},
        {"symbols", "list kernel symbols, or a binary's functions and USDT probes", kSymbolsHelp,
         [] { return symbolsOptionsDescription(); }, runSymbols},
        {"bench", "measure tracer overhead: kernel backend, ftrace, ptrace, strace, ltrace",
         kBenchHelp, [] { return benchOptionsDescription(); }, runBench},
    };
    return table;
}

}  // namespace probectl::cli
