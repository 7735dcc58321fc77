// A fuzzer of the module's generic netlink family. It asks the kernel for the family's
// operations and their attribute policies (CTRL_CMD_GETPOLICY), then sends two kinds of
// requests to every operation: structured ones (attributes of the policy's types, values at
// and beyond its ranges, strings from a small corpus of real and missing symbols and files)
// and random ones (unknown attribute types, wrong lengths, truncated and garbage bytes).
// Every request asks for an ack; the fuzzer checks that each is answered.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace itest {

struct FuzzOptions {
    std::uint64_t seed = 1;
    unsigned requests = 1000;
    unsigned seconds = 60;  // stops early when this much wall time has passed
    // A file the structured requests may place uprobes in (a copy nothing else runs).
    std::string uprobe_file;
    // Writes each request (hex) and its answer to the kernel log, to find the request
    // behind a hang from the console.
    bool log_requests = false;
};

struct FuzzStats {
    unsigned sent = 0;
    unsigned answered = 0;    // an ack, an error or the end of a dump arrived
    unsigned accepted = 0;    // answered with 0
    unsigned unanswered = 0;  // no answer within the timeout
    unsigned discarded = 0;   // nlmsg_len below a header: the netlink core drops those silently
    unsigned overruns = 0;    // the receive queue overflowed (records): answer may be lost
    unsigned ops = 0;         // operations the kernel listed
    std::map<int, unsigned> errors;  // errno -> count
    std::map<std::string, unsigned> accepted_by_op;
    std::vector<std::string> unanswered_requests;  // command, flags, kind, size of each
    std::string failure;                           // set when the fuzzer itself could not run
};

// Runs the fuzzer on a socket of its own; probes it added are removed when the socket
// closes, persistent ones by removePersistentProbes().
FuzzStats fuzzFamily(const FuzzOptions& opt);

// Removes every persistent probe (the fuzzer may have added some); returns how many.
unsigned removePersistentProbes();

}  // namespace itest
