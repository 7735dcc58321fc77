// Value-to-name decoders for strace-style arguments: signals, access modes, seek origins,
// fcntl commands, socket domains, types and protocols, arch_prctl codes, rlimit resources, and the
// flag-set printer they share with strace_format.cpp. Names and values come from the system
// headers; how unknown values print follows strace 6.1 (tests/unit/strace_format_test.cpp has its
// lines).
#pragma once

#include <cstdint>
#include <string>

namespace probectl::strace_names {

struct Name {
    std::uint64_t value;
    const char* name;
};

// Appends NAME|NAME for the bits of `v` covered by `table`; returns the bits left.
// Multi-bit entries must come before their parts.
template <std::size_t N>
std::uint64_t appendFlags(std::string& out, std::uint64_t v, const Name (&table)[N]) {
    for (const auto& f : table) {
        if ((v & f.value) == f.value && f.value != 0) {
            if (!out.empty())
                out += '|';
            out += f.name;
            v &= ~f.value;
        }
    }
    return v;
}

// "|0xREST" after names, nothing for no rest.
void appendRest(std::string& out, std::uint64_t rest);

// "0x9 /* SEEK_??? */"
std::string unknownValue(std::uint64_t v, const char* unknown);

// A flag set as strace prints one: "0", "A|B", "A|0x10", and "0x10 /* X_??? */" when no
// bit has a name (`unknown` is the "X_???").
template <std::size_t N>
std::string flags(std::uint64_t v, const Name (&table)[N], const char* unknown) {
    if (v == 0)
        return "0";
    std::string out;
    const std::uint64_t rest = appendFlags(out, v, table);
    if (out.empty())
        return unknownValue(rest, unknown);
    appendRest(out, rest);
    return out;
}

// open(2)'s flags but the access mode (O_CREAT|O_CLOEXEC); returns the bits left.
std::uint64_t appendOpenFlags(std::string& out, std::uint64_t v);

std::string signal(std::int64_t sig);         // "SIGUSR1", "SIGRTMIN", "SIGRT_2", "77", "0"
std::string umode(std::uint64_t mode);        // "0755", "06755", "000": the low 16 bits
std::string accessMode(std::uint64_t mode);   // "F_OK", "R_OK|W_OK"
std::string faccessatFlags(std::uint64_t v);  // "AT_SYMLINK_NOFOLLOW|AT_EACCESS"
std::string atFlags(std::uint64_t v);         // unlinkat's: "AT_REMOVEDIR"
std::string seekWhence(std::uint64_t v);      // "SEEK_END"
std::string cloexecFlags(std::uint64_t v);    // dup3's: "O_CLOEXEC"
std::string pipeFlags(std::uint64_t v);       // pipe2's: "O_NONBLOCK|O_CLOEXEC", "0"
std::string sigprocmaskHow(std::uint64_t v);  // "SIG_BLOCK"
std::string archPrctlCode(std::uint64_t v);   // "ARCH_SET_FS", "0x3001 /* ARCH_??? */"
std::string rlimitResource(std::uint64_t v);  // "RLIMIT_NOFILE", "0x63 /* RLIMIT_??? */"
std::string socketDomain(std::uint64_t v);    // "AF_INET"
std::string socketType(std::uint64_t v);      // "SOCK_STREAM|SOCK_CLOEXEC"
std::string socketProtocol(std::uint64_t domain, std::uint64_t proto);  // "IPPROTO_TCP"

std::string getrandomFlags(std::uint64_t v);  // "GRND_NONBLOCK|GRND_RANDOM", "0"
std::string waitOptions(std::uint64_t v);     // wait4's: "WNOHANG|WSTOPPED|__WALL"
// A wait status as strace prints the one wait4 wrote: "{WIFEXITED(s) && WEXITSTATUS(s) ==
// 3}", "{WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL}" (without the brackets around it).
std::string waitStatus(int status);
// futex's operation ("FUTEX_WAIT_PRIVATE", "FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME",
// "0x101 /* FUTEX_??? */"), FUTEX_WAIT_BITSET's and FUTEX_WAKE_BITSET's bitset
// ("FUTEX_BITSET_MATCH_ANY", "0x1234") and FUTEX_WAKE_OP's operation in val3
// ("FUTEX_OP_SET<<28|0<<12|FUTEX_OP_CMP_EQ<<24|0").
std::string futexOp(std::uint64_t v);
std::string futexBitset(std::uint64_t v);
std::string futexWakeOp(std::uint64_t v);

// fcntl: the command, and its third argument as the command reads it; false: the command
// takes none (strace prints two arguments).
std::string fcntlCommand(std::uint64_t cmd);
bool fcntlArgument(std::uint64_t cmd, std::uint64_t arg, std::string& out);
// The text after "= " of a successful fcntl returning flags or a signal ("0x1 (flags
// FD_CLOEXEC)"); empty when the return prints as a plain number.
std::string fcntlReturn(std::uint64_t cmd, std::int64_t ret);

}  // namespace probectl::strace_names
