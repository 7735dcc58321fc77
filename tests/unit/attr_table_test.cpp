// The generated reply tables (attrs_gen.hpp) decode what the module's PROBE_GET, PROBE_ADD
// and AGGR_GET replies carry, attribute by attribute, into the libctl structs.
#include <gtest/gtest.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "netlink/attrs_gen.hpp"
#include "probectl/counters.hpp"

using namespace probectl;
using namespace probectl::detail;

namespace {

struct Msg {
    nl_msg* m = nlmsg_alloc();
    ~Msg() { nlmsg_free(m); }
};

// Parses `m`'s attributes (no header) as the client's reply handlers do.
void parse(Msg& msg, nlattr** tb) {
    nlmsghdr* h = nlmsg_hdr(msg.m);
    ASSERT_EQ(nla_parse(tb, PROBECTL_A_MAX, nlmsg_attrdata(h, 0), nlmsg_attrlen(h, 0), nullptr), 0);
}

}  // namespace

TEST(AttrTable, ProbeGetReplyFillsEveryMember) {
    Msg msg;
    nla_put_u32(msg.m, PROBECTL_A_PROBE_ID, 7);
    nla_put_u32(msg.m, PROBECTL_A_PROBE_KIND, PROBECTL_KIND_URETPROBE);
    nla_put_string(msg.m, PROBECTL_A_PROBE_SYMBOL, "do_sys_openat2");
    nla_put_u32(msg.m, PROBECTL_A_PROBE_OFFSET, 0x10);
    nla_put_u64(msg.m, PROBECTL_A_PROBE_ADDR, 0xffffffff81000000ull);
    nla_put_u32(msg.m, PROBECTL_A_PROBE_OWNER, 4242);
    nla_put_u32(msg.m, PROBECTL_A_PROBE_FLAGS, PROBECTL_PROBE_F_ENABLED);
    nla_put_u32(msg.m, PROBECTL_A_PROBE_MAXACTIVE, 64);
    nla_put_u64(msg.m, PROBECTL_A_PROBE_HITS, 100);
    nla_put_u64(msg.m, PROBECTL_A_PROBE_NMISSED, 1);
    nla_put_u64(msg.m, PROBECTL_A_PROBE_DROPPED, 2);
    nla_put_u64(msg.m, PROBECTL_A_PROBE_FILTERED, 3);
    nla_put_u64(msg.m, PROBECTL_A_PROBE_REJECTED, 4);
    nla_put_string(msg.m, PROBECTL_A_PROBE_PATH, "/bin/busybox");
    nla_put_u64(msg.m, PROBECTL_A_PROBE_FILE_OFFSET, 0x1234);
    nla_put_u64(msg.m, PROBECTL_A_PROBE_REF_CTR_OFFSET, 0x5678);
    nlattr* tb[PROBECTL_A_MAX + 1] = {};
    parse(msg, tb);

    ProbeInfo p;
    decodeAll(kProbeGetReply, tb, p);
    EXPECT_EQ(p.id, 7u);
    EXPECT_EQ(p.kind, ProbeKind::Uretprobe);
    EXPECT_EQ(p.symbol, "do_sys_openat2");
    EXPECT_EQ(p.offset, 0x10u);
    EXPECT_EQ(p.addr, 0xffffffff81000000ull);
    EXPECT_EQ(p.owner, 4242u);
    EXPECT_TRUE(p.enabled());
    EXPECT_EQ(p.maxactive, 64u);
    EXPECT_EQ(p.hits, 100u);
    EXPECT_EQ(p.nmissed, 1u);
    EXPECT_EQ(p.dropped, 2u);
    EXPECT_EQ(p.filtered, 3u);
    EXPECT_EQ(p.rejected, 4u);
    EXPECT_EQ(p.path, "/bin/busybox");
    EXPECT_EQ(p.file_offset, 0x1234u);
    EXPECT_EQ(p.ref_ctr_offset, 0x5678u);
}

// AGGR_GET's reply: the map's counters and its packed entries as bytes (binary attribute).
TEST(AttrTable, AggrGetReplyFillsEveryMember) {
    Msg msg;
    const std::uint8_t entries[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    nla_put_u32(msg.m, PROBECTL_A_PROBE_ID, 3);
    nla_put_u32(msg.m, PROBECTL_A_AGGR_KEY_SIZE, 16);
    nla_put_u32(msg.m, PROBECTL_A_AGGR_BUCKETS, 66);
    nla_put_u32(msg.m, PROBECTL_A_AGGR_KEYS, 2);
    nla_put_u64(msg.m, PROBECTL_A_AGGR_OVERFLOW, 11);
    nla_put_u64(msg.m, PROBECTL_A_AGGR_NESTED, 12);
    nla_put_u64(msg.m, PROBECTL_A_AGGR_FAULTED, 13);
    nla_put(msg.m, PROBECTL_A_AGGR_ENTRIES, sizeof(entries), entries);
    nlattr* tb[PROBECTL_A_MAX + 1] = {};
    parse(msg, tb);

    AggrReply r;
    decodeAll(kAggrGetReply, tb, r);
    EXPECT_EQ(r.id, 3u);
    EXPECT_EQ(r.aggr_key_size, 16u);
    EXPECT_EQ(r.aggr_buckets, 66u);
    EXPECT_EQ(r.aggr_keys, 2u);
    EXPECT_EQ(r.aggr_overflow, 11u);
    EXPECT_EQ(r.aggr_nested, 12u);
    EXPECT_EQ(r.aggr_faulted, 13u);
    EXPECT_EQ(r.aggr_entries, std::vector<std::uint8_t>(entries, entries + sizeof(entries)));
}

TEST(AttrTable, AbsentAttributesKeepDefaults) {
    Msg msg;
    nla_put_u32(msg.m, PROBECTL_A_PROBE_ID, 9);
    nlattr* tb[PROBECTL_A_MAX + 1] = {};
    parse(msg, tb);
    AddedProbe a;
    a.addr = 5;
    decodeAll(kProbeAddReply, tb, a);
    EXPECT_EQ(a.id, 9u);
    EXPECT_EQ(a.addr, 5u);
}

// A string without its NUL (a truncated reply) ends at the attribute.
TEST(AttrTable, StringWithoutNulEndsAtTheAttribute) {
    Msg msg;
    nla_put(msg.m, PROBECTL_A_PROBE_SYMBOL, 3, "abc");
    nlattr* tb[PROBECTL_A_MAX + 1] = {};
    parse(msg, tb);
    ProbeInfo p;
    decodeAll(kProbeGetReply, tb, p);
    EXPECT_EQ(p.symbol, "abc");
}

// The counters are the spec's: PROBE_GET carries each of them, under its own attribute.
TEST(AttrTable, CountersAreProbeGetAttributes) {
    std::set<int> reply;
    std::apply([&](const auto&... r) { (reply.insert(r.id), ...); }, kProbeGetReply);
    std::set<int> ids;
    std::apply([&](const auto&... r) { (ids.insert(r.id), ...); }, kProbeCounters);
    EXPECT_EQ(ids.size(), std::tuple_size_v<decltype(kProbeCounters)>);
    for (int id : ids)
        EXPECT_TRUE(reply.count(id)) << id;
    EXPECT_TRUE(ids.count(PROBECTL_A_PROBE_REJECTED));
}

// counters.hpp (what ProbeInfo, ProbeStats, list and the summary expand) lists the same
// counters as PROBE_GET's table, in its order, and the summary shows every one of them.
TEST(AttrTable, CounterMacrosFollowTheSpec) {
    std::vector<std::string> table;
    std::apply([&](const auto&... r) { (table.emplace_back(r.name), ...); }, kProbeCounters);
#define PROBECTL_NAME(name) #name,
    std::vector<std::string> probe = {PROBECTL_PROBE_COUNTERS(PROBECTL_NAME)};
    std::set<std::string> trace = {PROBECTL_TRACE_COUNTERS(PROBECTL_NAME)};
#undef PROBECTL_NAME
    EXPECT_EQ(probe, table);
    for (const auto& n : probe)
        EXPECT_TRUE(trace.count(n)) << n;
    EXPECT_TRUE(trace.count("delivered"));
}
