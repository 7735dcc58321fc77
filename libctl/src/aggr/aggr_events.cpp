// EventAggregator: the kernel map's accumulation (kmod/aggr.c) over decoded events.
#include "probectl/aggr_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "aggr_rules.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/probe_spec.hpp"

namespace probectl {

namespace {

enum class KeySource { Comm, Pid, Tid, Cpu, Retval, Errno, Arg };

KeySource sourceOf(const std::string& name) {
    static const std::pair<const char*, KeySource> kTask[] = {
        {"comm", KeySource::Comm}, {"pid", KeySource::Pid},       {"tid", KeySource::Tid},
        {"cpu", KeySource::Cpu},   {"retval", KeySource::Retval}, {"errno", KeySource::Errno},
    };
    for (const auto& [n, s] : kTask)
        if (name == n)
            return s;
    return KeySource::Arg;
}

FetchedValue integer(const std::string& name, FetchType type, std::uint64_t raw) {
    FetchedValue v;
    v.name = name;
    v.type = type;
    v.raw = raw;
    return v;
}

const FetchedValue* findValue(const Event& e, const std::string& name) {
    for (const auto& v : e.values)
        if (v.name == name)
            return &v;
    return nullptr;
}

bool isReturnHit(const Event& e) {
    return e.is_return || (e.syscall && e.syscall_returned);
}

std::size_t bucketCount(const AggrTable& t) {
    if (t.hist == AggrHist::Log2)
        return kAggrLog2Buckets;
    if (t.hist == AggrHist::Linear)
        return static_cast<std::size_t>(detail::linearSteps(t.lin_min, t.lin_max, t.lin_step)) + 2;
    return 0;
}

}  // namespace

struct EventAggregator::Impl {
    AggrTable table;
    std::vector<KeySource> sources;
    KeySource value_source = KeySource::Arg;  // AggrValue::Arg: a fetch argument or task field
    bool needs_return = false;
    bool signed_known = false;
    std::size_t nbuckets = 0;
    std::unordered_map<std::string, std::size_t> index;  // key bytes -> entry

    // A task field of `e` (source not Arg), or the fetched value `name`. The event's own
    // argument of that name comes first, as in the kernel's map (prepareAggregation).
    static FetchedValue field(const Event& e, KeySource source, const std::string& name) {
        FetchedValue v;
        if (source != KeySource::Arg)
            if (const FetchedValue* f = findValue(e, name))
                return *f;
        switch (source) {
            case KeySource::Comm:
                v.name = name;
                v.type = FetchType::String;
                v.str = e.comm.substr(0, kAggrStrLen - 1);
                break;
            case KeySource::Pid:
                v = integer(name, FetchType::U32, e.tgid);
                break;
            case KeySource::Tid:
                v = integer(name, FetchType::U32, e.pid);
                break;
            case KeySource::Cpu:
                v = integer(name, FetchType::U32, e.cpu);
                break;
            case KeySource::Retval:
            case KeySource::Errno:
                // A return whose value is not known (the ptrace backend's call of a killed
                // thread) is not a return of 0, nor a read that faulted.
                if (!(e.parts & kRecordPartRetval)) {
                    v.name = name;
                    v.unknown = true;
                } else if (source == KeySource::Retval) {
                    v = integer(name, FetchType::S64, e.retval);
                } else {
                    v = integer(name, FetchType::S64, detail::isErrno(e.retval) ? e.retval : 0);
                }
                break;
            case KeySource::Arg:
                if (const FetchedValue* f = findValue(e, name)) {
                    v = *f;
                } else {
                    v.name = name;
                    v.faulted = true;
                }
                break;
        }
        return v;
    }

    // The key part of `e` for key `k`, and its bytes in `bytes` (a string as the kernel
    // keeps it: at most kAggrStrLen - 1 bytes).
    FetchedValue keyPart(const Event& e, std::size_t k, std::string& bytes) const {
        FetchedValue v = field(e, sources[k], table.key_names[k]);
        const bool str = !v.faulted && !v.unknown && isStringType(v.type);
        if (str && v.str.size() > kAggrStrLen - 1) {
            v.str.resize(kAggrStrLen - 1);
            v.truncated = true;
        }
        v.truncated = str && v.truncated;
        bytes.push_back(v.faulted ? '\1' : v.unknown ? '\3' : v.truncated ? '\2' : '\0');
        if (v.faulted || v.unknown)
            return v;
        if (isStringType(v.type)) {
            bytes += v.str;
            bytes.push_back('\0');
        } else {
            bytes.append(reinterpret_cast<const char*>(&v.raw), sizeof(v.raw));
        }
        return v;
    }
};

EventAggregator::EventAggregator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EventAggregator::EventAggregator(EventAggregator&&) noexcept = default;
EventAggregator& EventAggregator::operator=(EventAggregator&&) noexcept = default;
EventAggregator::~EventAggregator() = default;

Result<EventAggregator> EventAggregator::create(const AggrSpec& spec, std::string probe_spec) {
    auto usage = [](std::string msg) {
        Error e = makeError(EINVAL, std::move(msg));
        e.usage = true;
        return e;
    };
    if (spec.keys.size() > kAggrMaxKeys)
        return usage(fmt::format("at most {} keys, not {}", kAggrMaxKeys, spec.keys.size()));
    if (auto h = detail::checkHistogram(spec); !h)
        return usage(h.error().message);
    // The kernel refuses these names when the probe is added; events would count every hit
    // under <fault>, or ($retval at an entry) none. A text that is no spec (a site's label added)
    // is not judged.
    auto parsed = parseProbeSpec(probe_spec);
    if (parsed) {
        std::vector<std::string> names;
        for (const auto& a : parsed->fetch_args)
            names.push_back(a.name);
        // A USDT site's arguments come from its note: arg1.., at most 12 (sys/sdt.h).
        if (parsed->kind == SpecKind::Usdt)
            for (int i = 1; i <= 12; i++)
                names.push_back(fmt::format("arg{}", i));
        // exit and exit_group never return: refused as the kernel backend's aggregation
        // refuses them. The ptrace backend asks this as each spec is added
        // (PtraceSessionOptions::check), so a glob skips them and goes on; asked only once
        // every probe was placed, the refusal ended `trace -c --syscalls=all`.
        if (parsed->kind == SpecKind::Syscall && !firesAtReturn(*parsed)) {
            std::string what = spec.value == AggrValue::Latency ? "latency" : "";
            for (const auto& k : spec.keys)
                if (what.empty() && (k == "retval" || k == "errno"))
                    what = "$" + k;
            if (!what.empty())
                return usage(
                    fmt::format("{}: {}", probe_spec, detail::neverReturns(parsed->symbol, what)));
        }
        const bool at_return = parsed->kind == SpecKind::Kretprobe ||
                               parsed->kind == SpecKind::Uretprobe ||
                               parsed->kind == SpecKind::Syscall;
        if (auto r = checkAggrNames(spec, names, at_return, true); !r)
            return usage(fmt::format("{}: {}", probe_spec, r.error().message));
        if (spec.value == AggrValue::Arg) {
            // Every hit would count as one whose value "could not be read".
            auto own = std::find_if(parsed->fetch_args.begin(), parsed->fetch_args.end(),
                                    [&](const FetchArg& a) { return a.name == spec.value_arg; });
            const FetchArg* arg = own != parsed->fetch_args.end() ? &*own : nullptr;
            if (auto why = detail::notAnIntegerValue(spec.value_arg, arg))
                return usage(fmt::format("{}: {}", probe_spec, *why));
        }
    }
    auto impl = std::make_unique<Impl>();
    AggrTable& t = impl->table;
    t.spec = std::move(probe_spec);
    for (const auto& k : spec.keys) {
        // checkAggrNames judged a spec's (an argument named uid is that argument)
        if (k == "uid" && !parsed)
            return usage(
                "key uid: the events probectl aggregates itself (the ptrace backend, "
                "--ustack=dwarf, a recording) do not carry the uid (the kernel's maps key by it)");
        t.key_names.push_back(k);
        impl->sources.push_back(sourceOf(k));
        t.key_readings.push_back(impl->sources.back() == KeySource::Retval ? AggrKeyReading::Retval
                                 : impl->sources.back() == KeySource::Errno
                                     ? AggrKeyReading::Errno
                                     : AggrKeyReading::Plain);
        if (impl->sources.back() == KeySource::Retval || impl->sources.back() == KeySource::Errno)
            impl->needs_return = true;
    }
    t.value = spec.value;
    t.value_name = spec.value == AggrValue::Arg       ? spec.value_arg
                   : spec.value == AggrValue::Latency ? "latency"
                                                      : "";
    // A value named like a task field is that field unless the events carry an argument of
    // that name (prepareAggregation's rule: the spec's own arguments come first).
    if (spec.value == AggrValue::Arg && spec.value_arg != "comm" && spec.value_arg != "uid")
        impl->value_source = sourceOf(spec.value_arg);
    impl->needs_return = impl->needs_return || spec.value == AggrValue::Latency ||
                         impl->value_source == KeySource::Retval ||
                         impl->value_source == KeySource::Errno;
    t.hist = spec.hist;
    t.lin_min = spec.lin_min;
    t.lin_max = spec.lin_max;
    t.lin_step = spec.lin_step;
    t.capacity = detail::mapCapacity(spec);
    impl->nbuckets = bucketCount(t);
    return EventAggregator(std::move(impl));
}

void EventAggregator::add(const Event& e) {
    Impl& m = *impl_;
    AggrTable& t = m.table;
    if (m.needs_return && !isReturnHit(e))
        return;
    std::uint64_t value = 0;
    if (t.value == AggrValue::Latency) {
        value = e.latency_ns;
    } else if (t.value == AggrValue::Arg) {
        const FetchedValue* v = findValue(e, t.value_name);
        FetchedValue task;
        if (!v && m.value_source != KeySource::Arg) {
            task = Impl::field(e, m.value_source, t.value_name);
            v = &task;
        }
        if (v && v->unknown) {
            t.unknown++;
            return;
        }
        if (!v || v->faulted || isStringType(v->type) || v->array_len) {
            t.faulted++;
            return;
        }
        if (!m.signed_known) {
            t.is_signed = isSignedType(v->type);
            m.signed_known = true;
        }
        value = t.is_signed ? static_cast<std::uint64_t>(fetchedSigned(v->type, v->raw)) : v->raw;
    }
    std::string bytes;
    std::vector<FetchedValue> key;
    for (std::size_t k = 0; k < t.key_names.size(); k++)
        key.push_back(m.keyPart(e, k, bytes));
    auto it = m.index.find(bytes);
    if (it == m.index.end()) {
        if (t.entries.size() >= t.capacity) {
            t.overflow++;
            return;
        }
        it = m.index.emplace(std::move(bytes), t.entries.size()).first;
        AggrEntry fresh;
        fresh.key = std::move(key);
        fresh.buckets.assign(m.nbuckets, 0);
        t.entries.push_back(std::move(fresh));
        t.keys = static_cast<std::uint32_t>(t.entries.size());
    }
    AggrEntry& entry = t.entries[it->second];
    if (t.value != AggrValue::None) {
        if (entry.count == 0 || detail::lessRaw(t.is_signed, value, entry.min))
            entry.min = value;
        if (entry.count == 0 || detail::lessRaw(t.is_signed, entry.max, value))
            entry.max = value;
        entry.sum += value;
        if (m.nbuckets)
            entry.buckets[bucketOf(t, value)]++;
    }
    entry.count++;
}

const AggrTable& EventAggregator::table() const {
    return impl_->table;
}

}  // namespace probectl
