// AggrSpec -> AggrMapSpec (struct probectl_aggr_spec) on a PROBE_ADD request, with hidden fetch
// arguments for task keys.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>

#include "aggr_rules.hpp"
#include "kernel/entry_stack.hpp"
#include "output/json_text.hpp"
#include "probectl/aggr.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/syscall_probe.hpp"

namespace probectl {

namespace {

// Keys that are task fields, and the fetch source each becomes.
constexpr std::pair<const char*, const char*> kTaskKeys[] = {
    {"comm", "$comm"},
    {"pid", "$pid"},
    {"tid", "$tid"},
    {"uid", "$uid"},
    {"cpu", "$cpu"},
    {"retval", "$retval:s64"},
    // With kFetchFlagErrno: -ENOENT..., 0 for a success.
    {"errno", "$retval:s64"},
    // With AggrSpec::stack_depth.
    {"kstack", "$kstack"},
    {"ustack", "$ustack"},
};

bool isReturn(const ProbeRequest& req) {
    return req.kind == ProbeKind::Kretprobe || req.kind == ProbeKind::Uretprobe;
}

// $retval and $errno (`name`), or latency: what exists only at a return.
std::string needsReturn(const std::string& name) {
    return fmt::format("{} needs a return probe (kretprobe:, uretprobe:, syscall:)", name);
}

// A task key or value as the user wrote it: `--by retval`, or hist's FIELD `retval`.
std::string asTyped(const std::string& name, bool key) {
    return key ? "--by " + name : fmt::format("value '{}'", name);
}

// The same for `req`: a syscall: spec of exit or exit_group is no return probe either.
// `what` is what the syscall lacks ("$retval", "latency"), `typed` how the user asked for it.
std::string needsReturn(const std::string& what, const std::string& typed,
                        const ProbeRequest& req) {
    const std::string_view sym = req.symbol;
    if ((req.flags & kProbeFlagSyscall) && sym.starts_with(kSyscallWrapperPrefix) &&
        syscallNeverReturns(sym.substr(kSyscallWrapperPrefix.size())))
        return detail::neverReturns(sym.substr(kSyscallWrapperPrefix.size()), what);
    return needsReturn(typed);
}

// The names a key or value can take; retval and errno only at a return; uid and kstack
// only in the kernel (events aggregated in user space carry neither: the ptrace backend
// sees no kernel stack, a recording's stacks are not counted).
std::string knownNames(const std::vector<std::string>& own, bool at_return, bool events) {
    std::string out;
    for (const auto& n : own)
        out += (out.empty() ? "" : ", ") + n;
    for (const auto& [name, src] : kTaskKeys) {
        const std::string_view n = name;
        if ((at_return || (n != "retval" && n != "errno")) &&
            !(events && (n == "uid" || n == "kstack")))
            out += (out.empty() ? "" : ", ") + std::string(name);
    }
    return out;
}

std::string unknownName(const std::string& name, const std::vector<std::string>& own,
                        bool at_return, bool events = false) {
    return fmt::format("no key or value named '{}' (there are: {})", name,
                       knownNames(own, at_return, events));
}

// The index of fetch argument `name`, appending a task field when the spec has no such
// argument (a syscall's kstack: among the entry reads, detail::insertEntryArg); -1 with
// `err` set otherwise. `own`: the spec's own argument names, for the error; `is_key`: `name`
// came from --by (else it is the value).
int argIndex(const std::string& name, ProbeRequest& req, std::vector<FetchArg>& args,
             const std::vector<std::string>& own, std::string& err, std::uint32_t stack_depth = 0,
             bool is_key = true) {
    for (std::size_t i = 0; i < args.size(); i++)
        if (args[i].name == name)
            return static_cast<int>(i);
    for (const auto& [key, src] : kTaskKeys) {
        if (name != key)
            continue;
        if ((name == "retval" || name == "errno") && !isReturn(req)) {
            err = needsReturn("$" + name, asTyped(name, is_key), req);
            return -1;
        }
        FetchOptions fo;
        fo.is_return = isReturn(req);
        fo.tracepoint = req.kind == ProbeKind::Tracepoint;
        const bool stack = name == "kstack" || name == "ustack";
        const std::string source =
            stack && stack_depth ? fmt::format("{}{}", src, stack_depth) : std::string(src);
        auto arg = parseFetchArg(fmt::format("{}={}", name, source), args.size() + 1, fo);
        if (!arg) {
            err = arg.error().message;
            return -1;
        }
        auto prog = compileFetchArg(*arg);
        if (!prog) {
            err = prog.error().message;
            return -1;
        }
        if (args.size() >= kFetchMaxArgs) {
            err = fmt::format("more than {} fetch arguments with the keys", kFetchMaxArgs);
            return -1;
        }
        if (name == "errno")
            prog->insns.front().flags |= kFetchFlagErrno;
        if (name == "kstack" && detail::stackAtEntry(req))
            return static_cast<int>(
                detail::insertEntryArg(req, args, std::move(*arg), prog->insns));
        req.fetch.insert(req.fetch.end(), prog->insns.begin(), prog->insns.end());
        args.push_back(std::move(*arg));
        return static_cast<int>(args.size() - 1);
    }
    err = unknownName(name, own, isReturn(req));
    return -1;
}

// JSON gives a key that is not UTF-8 a sibling KEY_bytes (output/json_text.hpp). The spec's own
// arguments are checked for such a pair when parsed; the task key comm is not one of them, so
// `--by comm,comm_bytes` would put two values under comm_bytes and a reader keeps one.
std::optional<std::string> keyBytesClash(const std::vector<std::string>& keys,
                                         const std::vector<std::string>& arg_names) {
    const std::string comm = "comm";
    const std::string bytes = comm + std::string(json::kBytesSuffix);
    auto has = [](const std::vector<std::string>& v, const std::string& n) {
        return std::find(v.begin(), v.end(), n) != v.end();
    };
    if (!has(keys, comm) || has(arg_names, comm) || !has(keys, bytes))
        return std::nullopt;
    return fmt::format(
        "key '{}' clashes with the JSON field '{}' that carries the bytes of key '{}' when they "
        "are not UTF-8; rename the argument '{}'",
        bytes, bytes, comm, bytes);
}

}  // namespace

namespace {

Result<void> checkAndPrepare(const AggrSpec& spec, ProbeRequest& req, std::vector<FetchArg>& args) {
    if (spec.keys.size() > kAggrMaxKeys)
        return makeError(EINVAL,
                         fmt::format("at most {} keys, not {}", kAggrMaxKeys, spec.keys.size()));
    if (spec.value == AggrValue::Latency && !isReturn(req))
        return makeError(EINVAL, needsReturn("latency", "latency", req));
    if (args.empty() && !req.fetch.empty()) {
        // A syscall's strace plan: its values would be fetched for nothing.
        req.fetch.clear();
        req.fetch_entry = 0;
    }
    std::vector<std::string> own;
    for (const auto& arg : args)
        own.push_back(arg.name);
    if (auto clash = keyBytesClash(spec.keys, own))
        return makeError(EINVAL, *clash);
    AggrMapSpec a;
    a.max_entries = detail::mapCapacity(spec);
    std::string err;
    // A syscall's stack goes in among the entry reads, moving the values after it: placed
    // first, so that the indexes the other keys get stay where they are.
    if (detail::stackAtEntry(req) &&
        std::find(spec.keys.begin(), spec.keys.end(), "kstack") != spec.keys.end())
        if (argIndex("kstack", req, args, own, err, spec.stack_depth) < 0)
            return makeError(EINVAL, err);
    for (const auto& k : spec.keys) {
        int i = argIndex(k, req, args, own, err, spec.stack_depth);
        if (i < 0)
            return makeError(EINVAL, err);
        if (args[i].array_len)
            return makeError(EINVAL, fmt::format("key '{}' is an array", k));
        a.keys[a.nkeys++] = static_cast<std::uint8_t>(i);
    }
    a.value = spec.value;
    if (spec.value == AggrValue::Arg) {
        int i = argIndex(spec.value_arg, req, args, own, err, 0, false);
        if (i < 0)
            return makeError(EINVAL, err);
        if (auto why = detail::notAnIntegerValue(spec.value_arg, &args[i]))
            return makeError(EINVAL, *why);
        a.value_arg = static_cast<std::uint8_t>(i);
        if (isSignedType(args[i].type))
            a.flags |= kAggrFlagSigned;
    }
    a.hist = spec.hist;
    if (auto h = detail::checkHistogram(spec); !h)
        return h.error();
    if (spec.hist == AggrHist::Linear) {
        if (!(a.flags & kAggrFlagSigned) && spec.lin_min < 0)
            return makeError(EINVAL, "an unsigned value's histogram starts at 0 or above");
        a.lin_min = spec.lin_min;
        a.lin_max = spec.lin_max;
        a.lin_step = spec.lin_step;
    }
    req.aggr = a;
    return {};
}

}  // namespace

bool isAggrTaskKey(std::string_view name) {
    return std::any_of(std::begin(kTaskKeys), std::end(kTaskKeys),
                       [&](const auto& k) { return name == k.first; });
}

Result<void> checkAggrNames(const AggrSpec& spec, const std::vector<std::string>& arg_names,
                            bool at_return, bool events) {
    auto usage = [](std::string msg) {
        Error e = makeError(EINVAL, std::move(msg));
        e.usage = true;
        return e;
    };
    if (spec.value == AggrValue::Latency && !at_return)
        return usage(needsReturn("latency"));
    std::vector<std::string> names = spec.keys;
    if (spec.value == AggrValue::Arg)
        names.push_back(spec.value_arg);
    for (const auto& n : names) {
        if (std::find(arg_names.begin(), arg_names.end(), n) != arg_names.end())
            continue;  // the spec's own argument comes first, as in argIndex
        bool known = false;
        for (const auto& [task, src] : kTaskKeys)
            known = known || n == task;
        if (!known)
            return usage(unknownName(n, arg_names, at_return, events));
        if (events && n == "uid")
            return usage(fmt::format(
                "{} uid: the events probectl aggregates itself (the ptrace backend, "
                "--ustack=dwarf, a recording) do not carry the uid; they take {} (the kernel's "
                "maps take uid)",
                std::find(spec.keys.begin(), spec.keys.end(), n) != spec.keys.end() ? "key"
                                                                                    : "value",
                knownNames(arg_names, at_return, events)));
        if ((n == "retval" || n == "errno") && !at_return)
            return usage(needsReturn(
                asTyped(n, std::find(spec.keys.begin(), spec.keys.end(), n) != spec.keys.end())));
    }
    if (auto clash = keyBytesClash(spec.keys, arg_names))
        return usage(*clash);
    return {};
}

// Every refusal here is about the user's spec or options, never the system's: the CLI
// exits 2 for them as for any usage error.
Result<void> prepareAggregation(const AggrSpec& spec, ProbeRequest& req,
                                std::vector<FetchArg>& args) {
    auto r = checkAndPrepare(spec, req, args);
    if (!r) {
        Error e = r.error();
        e.usage = true;
        return e;
    }
    return {};
}

}  // namespace probectl
