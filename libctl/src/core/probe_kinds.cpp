// The kind table. Rows are in SpecKind order (kindInfo indexes it).
#include "probectl/probe_kinds.hpp"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "uapi/probectl.h"

namespace probectl {

namespace {

using F = KindFamily;
constexpr std::array<KindInfo, 7> kKinds{{
    // kind, name, alias, family, kernel kind, user, return, maxactive, fetch, predicate
    {SpecKind::Kprobe, "kprobe", "p", F::KernelSymbol, PROBECTL_KIND_KPROBE, false, false, false,
     true, true, "kprobe:SYMBOL[+OFF]  kprobe:0xADDR"},
    {SpecKind::Kretprobe, "kretprobe", "r", F::KernelSymbol, PROBECTL_KIND_KRETPROBE, false, true,
     true, true, true, "kretprobe:SYMBOL  kretprobe:0xADDR"},
    {SpecKind::Syscall, "syscall", "", F::Syscall, PROBECTL_KIND_KRETPROBE, false, false, true,
     true, true, "syscall:NAME (strace-style lines)"},
    {SpecKind::Uprobe, "uprobe", "", F::UserElf, PROBECTL_KIND_UPROBE, true, false, false, true,
     true, "uprobe:PATH:FUNCTION[+OFF]  uprobe:PATH:0xFILEOFFSET"},
    {SpecKind::Uretprobe, "uretprobe", "", F::UserElf, PROBECTL_KIND_URETPROBE, true, true, false,
     true, true, "uretprobe:PATH:FUNCTION"},
    {SpecKind::Usdt, "usdt", "", F::UserElf, PROBECTL_KIND_UPROBE, true, false, false, false, false,
     "usdt:PATH:[PROVIDER:]NAME"},
    {SpecKind::Tracepoint, "tracepoint", "t", F::Tracepoint, PROBECTL_KIND_TRACEPOINT, false, false,
     false, true, false, "tracepoint:SUBSYS:EVENT"},
}};

constexpr bool inOrder() {
    for (std::size_t i = 0; i < kKinds.size(); i++)
        if (static_cast<std::size_t>(kKinds[i].kind) != i)
            return false;
    return true;
}
static_assert(inOrder(), "kKinds rows must be in SpecKind order");

}  // namespace

std::span<const KindInfo> probeKinds() {
    return kKinds;
}

const KindInfo& kindInfo(SpecKind kind) {
    return kKinds[static_cast<std::size_t>(kind)];
}

const KindInfo* findKind(std::string_view prefix) {
    for (const KindInfo& k : kKinds)
        if (prefix == k.name || (!k.alias.empty() && prefix == k.alias))
            return &k;
    return nullptr;
}

std::string_view toString(SpecKind kind) {
    return kindInfo(kind).name;
}

bool isUserSpace(SpecKind kind) {
    return kindInfo(kind).user_space;
}

bool isReturn(SpecKind kind) {
    return kindInfo(kind).is_return;
}

namespace {

template <typename Keep>
std::string joinNames(Keep keep) {
    std::vector<std::string_view> names;
    for (const KindInfo& k : kKinds)
        if (keep(k))
            names.push_back(k.name);
    std::string s;
    for (std::size_t i = 0; i < names.size(); i++) {
        if (i > 0)
            s += i + 1 == names.size() ? " or " : ", ";
        s += names[i];
    }
    return s;
}

}  // namespace

std::string kindNames() {
    return joinNames([](const KindInfo&) { return true; });
}

std::string kindNames(bool user_space) {
    return joinNames([&](const KindInfo& k) { return k.user_space == user_space; });
}

std::string kindsHelp() {
    std::string s;
    for (const KindInfo& k : kKinds) {
        const std::string head =
            k.alias.empty() ? std::string(k.name) : fmt::format("{} ({}:)", k.name, k.alias);
        s += fmt::format("  {:<16}{}\n", head, k.forms);
    }
    return s;
}

}  // namespace probectl
