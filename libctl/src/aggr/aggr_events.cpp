// EventAggregator: the kernel map's accumulation (kmod/aggr.c) over decoded events.
#include "probectl/aggr_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "aggr_rules.hpp"
#include "probectl/fetch_spec.hpp"

namespace probectl {

namespace {

enum class KeySource { Comm, Pid, Tid, Cpu, Retval, Arg };

KeySource sourceOf(const std::string& name) {
    static const std::pair<const char*, KeySource> kTask[] = {
        {"comm", KeySource::Comm}, {"pid", KeySource::Pid},       {"tid", KeySource::Tid},
        {"cpu", KeySource::Cpu},   {"retval", KeySource::Retval},
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

bool lessRaw(bool is_signed, std::uint64_t a, std::uint64_t b) {
    return is_signed ? static_cast<std::int64_t>(a) < static_cast<std::int64_t>(b) : a < b;
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
    bool needs_return = false;
    bool signed_known = false;
    std::size_t nbuckets = 0;
    std::unordered_map<std::string, std::size_t> index;  // key bytes -> entry

    // The key part of `e` for key `k`, and its bytes in `bytes` (a string as the kernel
    // keeps it: at most kAggrStrLen - 1 bytes).
    FetchedValue keyPart(const Event& e, std::size_t k, std::string& bytes) const {
        const std::string& name = table.key_names[k];
        FetchedValue v;
        switch (sources[k]) {
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
                v = integer(name, FetchType::S64, e.retval);
                break;
            case KeySource::Arg:
                if (const FetchedValue* f = findValue(e, name)) {
                    v = *f;
                    if (isStringType(v.type) && v.str.size() > kAggrStrLen - 1)
                        v.str.resize(kAggrStrLen - 1);
                    v.truncated = false;
                } else {
                    v.name = name;
                    v.faulted = true;
                }
                break;
        }
        bytes.push_back(v.faulted ? '\1' : '\0');
        if (v.faulted)
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
    auto impl = std::make_unique<Impl>();
    AggrTable& t = impl->table;
    t.spec = std::move(probe_spec);
    for (const auto& k : spec.keys) {
        if (k == "uid")
            return usage("key uid: events do not carry the uid (only in-kernel maps key by it)");
        t.key_names.push_back(k);
        impl->sources.push_back(sourceOf(k));
        if (impl->sources.back() == KeySource::Retval)
            impl->needs_return = true;
    }
    t.value = spec.value;
    t.value_name = spec.value == AggrValue::Arg       ? spec.value_arg
                   : spec.value == AggrValue::Latency ? "latency"
                                                      : "";
    impl->needs_return = impl->needs_return || spec.value == AggrValue::Latency;
    t.hist = spec.hist;
    t.lin_min = spec.lin_min;
    t.lin_max = spec.lin_max;
    t.lin_step = spec.lin_step;
    t.capacity = spec.max_entries ? spec.max_entries : kAggrDefaultEntries;
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
        if (entry.count == 0 || lessRaw(t.is_signed, value, entry.min))
            entry.min = value;
        if (entry.count == 0 || lessRaw(t.is_signed, entry.max, value))
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
