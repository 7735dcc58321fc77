// Tracepoints: prototypes from a BTF the test builds with libbpf (so every shape is known:
// names from __probestub_/__bpf_trace_, a struct by value, more than six arguments),
// subsystems from a fake tracefs tree, vmlinux/module from a kallsyms fixture; then the
// running kernel's own BTF, when this machine has one.
#include "probectl/tracepoints.hpp"

#include <bpf/btf.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "probectl/fetch_program.hpp"
#include "probectl/probe_spec.hpp"

using namespace probectl;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

// struct thing { int id; u32 flags:3; const char *name; char tag[8]; struct thing *next; }
// demo_event(void *, struct thing *t, int n)            names from __probestub_demo_event
// demo_class_a(void *, unsigned long len, bool on)      names from __bpf_trace_demo_class
// by_value(void *, struct thing v, int after)           a struct by value
// seven(void *, long a1..a7)                            more than six arguments
struct Fixture {
    fs::path dir;
    TracepointSources src;

    Fixture() {
        dir = fs::temp_directory_path() / ("probectl-tp-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir / "events/demo/demo_event");
        fs::create_directories(dir / "events/demo/demo_class_a");
        fs::create_directories(dir / "events/syscalls/sys_enter_openat");
        fs::create_directories(dir / "events/other/by_value");
        struct btf* b = btf__new_empty();
        const int i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
        const int u32 = btf__add_int(b, "unsigned int", 4, 0);
        const int chr = btf__add_int(b, "char", 1, BTF_INT_SIGNED);
        const int ul = btf__add_int(b, "long unsigned int", 8, 0);
        const int sl = btf__add_int(b, "long int", 8, BTF_INT_SIGNED);
        const int bl = btf__add_int(b, "_Bool", 1, BTF_INT_BOOL);
        const int cchr = btf__add_const(b, chr);
        const int cptr = btf__add_ptr(b, cchr);
        const int vptr = btf__add_ptr(b, 0);
        const int tag = btf__add_array(b, i32, chr, 8);
        // Fields attach to the type added last: the pointer comes first, to the next id.
        const int thing_ptr = btf__add_ptr(b, tag + 2);
        const int thing = btf__add_struct(b, "thing", 40);
        EXPECT_EQ(thing, tag + 2);
        btf__add_field(b, "id", i32, 0, 0);
        btf__add_field(b, "flags", u32, 32, 3);
        btf__add_field(b, "name", cptr, 64, 0);
        btf__add_field(b, "tag", tag, 128, 0);
        btf__add_field(b, "next", thing_ptr, 192, 0);
        auto proto = [&](std::initializer_list<std::pair<const char*, int>> params) {
            const int p = btf__add_func_proto(b, 0);
            for (const auto& [n, t] : params)
                btf__add_func_param(b, n, t);
            return p;
        };
        auto traceTypedef = [&](const char* name, int anon_proto) {
            btf__add_typedef(b, name, btf__add_ptr(b, anon_proto));
        };
        traceTypedef("btf_trace_demo_event", proto({{"", vptr}, {"", thing_ptr}, {"", i32}}));
        btf__add_func(b, "__probestub_demo_event", BTF_FUNC_STATIC,
                      proto({{"__data", vptr}, {"t", thing_ptr}, {"n", i32}}));
        traceTypedef("btf_trace_demo_class_a", proto({{"", vptr}, {"", ul}, {"", bl}}));
        btf__add_func(b, "__bpf_trace_demo_class", BTF_FUNC_STATIC,
                      proto({{"__data", vptr}, {"len", ul}, {"on", bl}}));
        traceTypedef("btf_trace_by_value", proto({{"", vptr}, {"", thing}, {"", i32}}));
        btf__add_func(b, "__probestub_by_value", BTF_FUNC_STATIC,
                      proto({{"__data", vptr}, {"v", thing}, {"after", i32}}));
        traceTypedef("btf_trace_seven", proto({{"", vptr},
                                               {"", sl},
                                               {"", sl},
                                               {"", sl},
                                               {"", sl},
                                               {"", sl},
                                               {"", sl},
                                               {"", sl}}));
        btf__add_func(b, "__probestub_seven", BTF_FUNC_STATIC,
                      proto({{"__data", vptr},
                             {"a1", sl},
                             {"a2", sl},
                             {"a3", sl},
                             {"a4", sl},
                             {"a5", sl},
                             {"a6", sl},
                             {"a7", sl}}));
        std::uint32_t size = 0;
        const void* raw = btf__raw_data(b, &size);
        std::ofstream(dir / "vmlinux.btf", std::ios::binary)
            .write(static_cast<const char*>(raw), size);
        btf__free(b);
        std::ofstream(dir / "kallsyms") << "0000000000000000 D __tracepoint_demo_event\n"
                                           "0000000000000000 D __tracepoint_demo_class_a\n"
                                           "0000000000000000 D __tracepoint_by_value\n"
                                           "0000000000000000 D __tracepoint_seven\n"
                                           "0000000000000000 T schedule\n"
                                           "0000000000000000 d __tracepoint_kvm_exit\t[kvm]\n";
        src.kallsyms = dir / "kallsyms";
        src.tracefs = dir;
        src.mount_tracefs = false;
        src.btf = dir / "vmlinux.btf";
    }
    ~Fixture() { fs::remove_all(dir); }
};

ProbeSpec spec(std::string_view text) {
    auto r = parseProbeSpec(text);
    EXPECT_TRUE(r.ok()) << text << ": " << (r ? "" : r.error().render());
    return r ? *r : ProbeSpec{};
}

const TracepointInfo* byName(const Tracepoints& t, std::string_view name) {
    for (const auto& tp : t.all())
        if (tp.name == name)
            return &tp;
    return nullptr;
}

}  // namespace

TEST(Tracepoints, SourcesCombine) {
    Fixture fx;
    auto t = Tracepoints::load(fx.src);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_TRUE(t->hasBtf());
    EXPECT_TRUE(t->hasTracefs());
    EXPECT_EQ(t->all().size(), 5u);  // kallsyms' five, not `schedule`
    const auto* ev = byName(*t, "demo_event");
    ASSERT_NE(ev, nullptr);
    EXPECT_EQ(ev->subsystem, "demo");
    EXPECT_EQ(ev->module, "");
    EXPECT_EQ(ev->spec(), "tracepoint:demo:demo_event");
    ASSERT_TRUE(ev->has_proto);
    ASSERT_EQ(ev->params.size(), 2u);
    EXPECT_EQ(ev->params[0].name, "t");
    EXPECT_EQ(ev->params[0].type, "struct thing *");
    EXPECT_EQ(ev->params[0].size, 8u);
    EXPECT_TRUE(ev->params[0].readable);
    EXPECT_EQ(ev->params[1].name, "n");
    EXPECT_EQ(ev->params[1].default_type, FetchType::S32);
    EXPECT_EQ(ev->protoStr(), "t:struct thing * n:int");
    // No __probestub_: names from the event class function with the same argument types.
    const auto* cls = byName(*t, "demo_class_a");
    ASSERT_NE(cls, nullptr);
    EXPECT_EQ(cls->protoStr(), "len:long unsigned int on:_Bool");
    EXPECT_EQ(cls->params[1].default_type, FetchType::U8);
    const auto* kvm = byName(*t, "kvm_exit");
    ASSERT_NE(kvm, nullptr);
    EXPECT_EQ(kvm->module, "kvm");
    EXPECT_FALSE(kvm->has_proto);
    EXPECT_EQ(kvm->protoStr(), "?");
}

TEST(Tracepoints, UnreadableArguments) {
    Fixture fx;
    auto t = Tracepoints::load(fx.src);
    ASSERT_TRUE(t.ok());
    const auto* bv = byName(*t, "by_value");
    ASSERT_NE(bv, nullptr);
    EXPECT_FALSE(bv->params[0].readable);
    EXPECT_THAT(bv->params[0].why_unreadable, HasSubstr("struct thing is not an integer"));
    // A 40-byte struct goes on the stack and `after` moves: no longer where the probe looks.
    EXPECT_FALSE(bv->params[1].readable);
    EXPECT_THAT(bv->params[1].why_unreadable, HasSubstr("follows argument 1"));
    const auto* seven = byName(*t, "seven");
    ASSERT_EQ(seven->params.size(), 7u);
    EXPECT_TRUE(seven->params[5].readable);  // the sixth: the first stack slot
    EXPECT_FALSE(seven->params[6].readable);
    EXPECT_THAT(seven->params[6].why_unreadable, HasSubstr("beyond the first 6"));

    auto r = t->resolveArgs(*seven, spec("tracepoint:*:seven x=args.a7").fetch_args);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("args.a7 cannot be read: beyond the first 6"));
    r = t->resolveArgs(*bv, spec("tracepoint:other:by_value x=$arg2").fetch_args);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("$arg2 cannot be read: follows argument 1"));
    r = t->resolveArgs(*byName(*t, "demo_event"),
                       spec("tracepoint:demo:demo_event x=$arg3").fetch_args);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("$arg3 does not exist: demo_event takes 2"));
    // defaultArgs leaves out what cannot be read.
    auto d = t->defaultArgs(*bv);
    EXPECT_TRUE(d.empty());
    d = t->defaultArgs(*seven);
    ASSERT_EQ(d.size(), 6u);
    EXPECT_EQ(d[5].str(), "a6=$arg6:s64");
}

TEST(Tracepoints, NamesAndMembersBecomeArgsAndDereferences) {
    Fixture fx;
    auto t = Tracepoints::load(fx.src);
    ASSERT_TRUE(t.ok());
    const auto* ev = byName(*t, "demo_event");
    auto r = t->resolveArgs(*ev, spec("tracepoint:demo:demo_event n=args.n id=args.t->id "
                                      "name=args.t->name tag=args.t->tag "
                                      "nid=args.t->next->id hexid=args.t->id:x32 p=args.t")
                                     .fetch_args);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->size(), 7u);
    EXPECT_EQ((*r)[0].str(), "n=$arg2:s32");
    EXPECT_EQ((*r)[1].str(), "id=+0($arg1):s32");
    EXPECT_EQ((*r)[2].str(), "name=+0(+8($arg1)):string");  // char *: the string it points at
    EXPECT_EQ((*r)[3].str(), "tag=+0x10($arg1):string");    // char[8]: the string in place
    EXPECT_EQ((*r)[4].str(), "nid=+0(+0x18($arg1)):s32");
    EXPECT_EQ((*r)[5].str(), "hexid=+0($arg1):x32");  // a TYPE given wins
    EXPECT_EQ((*r)[6].str(), "p=$arg1:x64");
    // And they compile to what the kernel validator takes.
    auto progs = compileFetchArgs(*r);
    ASSERT_TRUE(progs.ok()) << progs.error().message;
    EXPECT_EQ(progs->size(), 7u);
}

TEST(Tracepoints, MemberErrorsNameTheField) {
    Fixture fx;
    auto t = Tracepoints::load(fx.src);
    ASSERT_TRUE(t.ok());
    const auto* ev = byName(*t, "demo_event");
    auto err = [&](std::string_view text) {
        auto r = t->resolveArgs(*ev, spec(text).fetch_args);
        EXPECT_FALSE(r.ok()) << text;
        return r ? std::string() : r.error().message;
    };
    EXPECT_THAT(err("t:demo:demo_event x=args.nope"),
                HasSubstr("demo_event has no parameter 'nope' (it has: t, n)"));
    EXPECT_THAT(err("t:demo:demo_event x=args.t->nope"),
                HasSubstr("struct thing has no member 'nope'"));
    EXPECT_THAT(err("t:demo:demo_event x=args.n->id"),
                HasSubstr("args.n is int, not a pointer to a struct or union: no '->id'"));
    EXPECT_THAT(err("t:demo:demo_event x=args.t->flags"), HasSubstr("bitfield"));
    EXPECT_THAT(err("t:demo:demo_event x=args.t->tag:u64"), HasSubstr("read it as :string"));
}

TEST(Tracepoints, FindRefusesWithTheReason) {
    Fixture fx;
    auto t = Tracepoints::load(fx.src);
    ASSERT_TRUE(t.ok());
    auto find = [&](std::string_view text) { return t->find(spec(text)); };
    auto ok = find("tracepoint:demo:demo_event");
    ASSERT_TRUE(ok.ok()) << ok.error().message;
    EXPECT_EQ((*ok)->name, "demo_event");
    EXPECT_TRUE(find("tracepoint:*:demo_event").ok());
    auto e = find("tracepoint:demo:demo_evnt");
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().err, ENOENT);
    EXPECT_THAT(e.error().message, HasSubstr("unknown tracepoint 'demo_evnt'; did you mean "
                                             "tracepoint:demo:demo_event"));
    e = find("tracepoint:sched:demo_event");
    ASSERT_FALSE(e.ok());
    EXPECT_THAT(e.error().message, HasSubstr("filed under 'demo', not 'sched'"));
    // The message says all: no "(Invalid argument)" after its hint.
    EXPECT_EQ(e.error().describe(), e.error().message);
    e = find("tracepoint:kvm:kvm_exit");
    ASSERT_FALSE(e.ok());
    EXPECT_THAT(e.error().message, HasSubstr("tracepoint of module kvm"));
    EXPECT_EQ(e.error().describe(), e.error().message);
    e = find("tracepoint:syscalls:sys_enter_openat");
    ASSERT_FALSE(e.ok());
    EXPECT_THAT(e.error().message,
                HasSubstr("use syscall:openat or tracepoint:raw_syscalls:sys_enter"));
    e = find("tracepoint:demo:seven");  // a tracepoint without a trace event
    ASSERT_FALSE(e.ok());
    EXPECT_THAT(e.error().message, HasSubstr("write tracepoint:*:seven"));
}

// A subsystem that does not exist is what is wrong (a tracepoint was suggested instead):
// close subsystem names, and where to list them.
TEST(Tracepoints, FindSaysASubsystemDoesNotExist) {
    Fixture fx;
    auto t = Tracepoints::load(fx.src);
    ASSERT_TRUE(t.ok());
    auto e = t->find(spec("tracepoint:nosuch:x"));
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().err, ENOENT);
    EXPECT_EQ(e.error().message,
              "tracepoint:nosuch:x: no tracepoint subsystem 'nosuch' (list them with probectl "
              "symbols 'tracepoint:*')");
    e = t->find(spec("tracepoint:dmeo:demo_evnt"));
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().message,
              "tracepoint:dmeo:demo_evnt: no tracepoint subsystem 'dmeo'; did you mean demo "
              "(list them with probectl symbols 'tracepoint:*')");
    e = t->find(spec("tracepoint:sycalls:sys_enter_read"));
    ASSERT_FALSE(e.ok());
    EXPECT_THAT(e.error().message, HasSubstr("did you mean syscalls"));
    fs::remove_all(fx.dir / "events/syscalls");  // a kernel without syscall events
    e = t->find(spec("tracepoint:syscalls:sys_enter_read"));
    ASSERT_FALSE(e.ok());
    EXPECT_THAT(e.error().message, HasSubstr("no tracepoint subsystem 'syscalls'"));
    EXPECT_THAT(e.error().message, HasSubstr("; for the syscall use syscall:read"));
    // A known subsystem still gets the close tracepoint names.
    e = t->find(spec("tracepoint:demo:x"));
    ASSERT_FALSE(e.ok());
    EXPECT_THAT(e.error().message, HasSubstr("unknown tracepoint 'x'"));
}

// `tracepoint:sched:nosuch` said only "unknown tracepoint 'nosuch'" when no name was within
// three edits: the subsystem is known, so its events near the name are named, else all of
// them when they are few, else how to list them.
TEST(Tracepoints, AnUnknownEventNamesItsSubsystemsEvents) {
    Fixture fx;
    {
        std::ofstream k(fx.dir / "kallsyms", std::ios::app);
        for (int i = 0; i < 8; i++) {
            k << "0000000000000000 D __tracepoint_big_event_" << i << "\n";
            fs::create_directories(fx.dir / fmt::format("events/big/big_event_{}", i));
        }
    }
    auto t = Tracepoints::load(fx.src);
    ASSERT_TRUE(t.ok()) << t.error().message;
    auto says = [&](std::string_view text) {
        auto r = t->find(spec(text));
        EXPECT_FALSE(r.ok()) << text;
        EXPECT_EQ(r ? 0 : r.error().err, ENOENT) << text;
        return r ? std::string() : r.error().message;
    };
    EXPECT_EQ(says("tracepoint:demo:nosuch"),
              "tracepoint:demo:nosuch: unknown tracepoint 'nosuch'; demo has: "
              "tracepoint:demo:demo_class_a, tracepoint:demo:demo_event");
    EXPECT_EQ(says("tracepoint:demo:class"),
              "tracepoint:demo:class: unknown tracepoint 'class'; did you mean "
              "tracepoint:demo:demo_class_a");
    EXPECT_EQ(says("tracepoint:big:nosuch"),
              "tracepoint:big:nosuch: unknown tracepoint 'nosuch'; big has 8 events (list them "
              "with probectl symbols 'tracepoint:big:*')");
    // Names within three edits come first, from any subsystem, as before.
    EXPECT_EQ(says("tracepoint:big:demo_evnt"),
              "tracepoint:big:demo_evnt: unknown tracepoint 'demo_evnt'; did you mean "
              "tracepoint:demo:demo_event");
}

TEST(Tracepoints, MatchGlobs) {
    Fixture fx;
    auto t = Tracepoints::load(fx.src);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->match("demo", "*").size(), 2u);
    EXPECT_EQ(t->match("*", "*").size(), 5u);
    EXPECT_EQ(t->match("d*", "*class*").size(), 1u);
    EXPECT_EQ(t->match("*", "seven").size(), 1u);  // no subsystem: only `*` matches
    EXPECT_EQ(t->match("demo", "seven").size(), 0u);
}

TEST(Tracepoints, WithoutBtfOnlyRawArguments) {
    Fixture fx;
    fx.src.btf.clear();
    auto t = Tracepoints::load(fx.src);
    ASSERT_TRUE(t.ok());
    EXPECT_FALSE(t->hasBtf());
    const auto* ev = byName(*t, "demo_event");
    ASSERT_NE(ev, nullptr);
    EXPECT_FALSE(ev->has_proto);
    auto r = t->resolveArgs(*ev, spec("t:demo:demo_event a=$arg5 s=+0($arg1):string").fetch_args);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ((*r)[0].str(), "a=$arg5:x64");
    r = t->resolveArgs(*ev, spec("t:demo:demo_event x=args.n").fetch_args);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("needs the kernel's BTF"));
    EXPECT_EQ(r.error().describe(), r.error().message);  // ends in its hint: "use $argN"
    EXPECT_TRUE(t->defaultArgs(*ev).empty());
}

// The machine's own kernel, when it has BTF (this host and the test VMs, except the
// debug kernel built without it): sched_process_fork(parent, child), both task pointers.
TEST(Tracepoints, RunningKernelBtf) {
    if (!fs::exists("/sys/kernel/btf/vmlinux"))
        GTEST_SKIP() << "no /sys/kernel/btf/vmlinux on this machine";
    TracepointSources src;
    src.mount_tracefs = false;
    auto t = Tracepoints::load(src);
    ASSERT_TRUE(t.ok()) << t.error().message;
    const TracepointInfo* fork = byName(*t, "sched_process_fork");
    ASSERT_NE(fork, nullptr);
    EXPECT_EQ(fork->module, "");
    ASSERT_TRUE(fork->has_proto);
    EXPECT_EQ(fork->protoStr(), "parent:struct task_struct * child:struct task_struct *");
    // The member offset agrees with libbpf's own reading of struct task_struct.
    struct btf* b = btf__load_vmlinux_btf();
    ASSERT_NE(b, nullptr);
    const int id = btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT);
    ASSERT_GT(id, 0);
    const struct btf_type* ts = btf__type_by_id(b, id);
    long pid_off = -1;
    for (int i = 0; i < btf_vlen(ts); i++)
        if (std::string_view(btf__name_by_offset(b, btf_members(ts)[i].name_off)) == "pid")
            pid_off = btf_member_bit_offset(ts, i) / 8;
    btf__free(b);
    ASSERT_GT(pid_off, 0);
    auto r = t->resolveArgs(*fork, spec("tracepoint:sched:sched_process_fork "
                                        "pid=args.child->pid comm=args.child->comm")
                                       .fetch_args);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ((*r)[0].str(), fmt::format("pid=+{:#x}($arg2):s32", pid_off));
    EXPECT_EQ((*r)[1].type, FetchType::String);
}
