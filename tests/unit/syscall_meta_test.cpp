#include "probectl/syscall_meta.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using namespace probectl;
using ::testing::HasSubstr;

namespace {

const std::string kTracefs = std::string(PROBECTL_FIXTURES) + "/syscalls";

std::string formatFile(const std::string& event) {
    std::ifstream in(kTracefs + "/events/syscalls/" + event + "/format");
    EXPECT_TRUE(in) << event;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TraceEventFormat parsed(const std::string& event) {
    auto r = parseEventFormat(formatFile(event));
    EXPECT_TRUE(r.ok()) << event << ": " << (r ? "" : r.error().message);
    return r ? *r : TraceEventFormat{};
}

}  // namespace

TEST(SyscallMeta, ParsesAnEnterFormat) {
    auto ev = parsed("sys_enter_openat");
    EXPECT_EQ(ev.name, "sys_enter_openat");
    EXPECT_EQ(ev.id, 651u);
    ASSERT_EQ(ev.common.size(), 4u);
    EXPECT_EQ(ev.common[0].type, "unsigned short");
    EXPECT_EQ(ev.common[0].name, "common_type");
    EXPECT_EQ(ev.common[3].name, "common_pid");
    EXPECT_TRUE(ev.common[3].is_signed);
    ASSERT_EQ(ev.fields.size(), 5u);
    EXPECT_EQ(ev.fields[0].name, "__syscall_nr");
    EXPECT_EQ(ev.fields[0].size, 4u);
    EXPECT_EQ(ev.fields[2].type, "const char *");
    EXPECT_EQ(ev.fields[2].name, "filename");
    EXPECT_EQ(ev.fields[2].offset, 24u);
    EXPECT_EQ(ev.fields[2].size, 8u);
    EXPECT_FALSE(ev.fields[2].is_signed);
    EXPECT_THAT(ev.print_fmt, HasSubstr("\"dfd: 0x%08lx, filename: 0x%08lx"));
}

TEST(SyscallMeta, ParsesAnExitFormat) {
    auto ev = parsed("sys_exit_read");
    ASSERT_EQ(ev.fields.size(), 2u);
    EXPECT_EQ(ev.fields[1].type, "long");
    EXPECT_EQ(ev.fields[1].name, "ret");
    EXPECT_TRUE(ev.fields[1].is_signed);
    EXPECT_EQ(ev.print_fmt, "\"0x%lx\", REC->ret");
}

TEST(SyscallMeta, ArrayFieldsAndMissingSeparator) {
    // A non-syscall event (sched_process_exec-like) with an array field, and no blank line
    // after the common fields.
    auto r = parseEventFormat(
        "name: demo\nID: 7\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\nprint fmt: \"%s\", REC->comm\n");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->common.size(), 1u);
    ASSERT_EQ(r->fields.size(), 2u);
    EXPECT_EQ(r->fields[0].name, "comm");
    EXPECT_EQ(r->fields[0].type, "char");
    EXPECT_EQ(r->fields[0].array_len, 16u);
    EXPECT_EQ(r->fields[1].type, "pid_t");
}

TEST(SyscallMeta, BadFormatsNameTheLine) {
    auto err = [](std::string_view text) {
        auto r = parseEventFormat(text);
        EXPECT_FALSE(r.ok()) << text;
        return r ? std::string() : r.error().message;
    };
    EXPECT_THAT(err("ID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"),
                HasSubstr("no 'name:'"));
    EXPECT_THAT(err("name: x\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"),
                HasSubstr("no 'ID:'"));
    EXPECT_THAT(err("name: x\nID: 1\nformat:\n"), HasSubstr("no fields"));
    EXPECT_THAT(err("name: x\nID: one\n"), HasSubstr("line 2: bad ID"));
    EXPECT_THAT(err("name: x\nID: 1\nformat:\n\tfield:int a;\toffset:z;\tsize:4;\tsigned:1;\n"),
                HasSubstr("line 4: expected 'offset:N;'"));
    EXPECT_THAT(err("name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\n"),
                HasSubstr("line 4: expected 'signed:0;'"));
    EXPECT_THAT(err("name: x\nID: 1\nformat:\n\tfield:a;\toffset:0;\tsize:4;\tsigned:1;\n"),
                HasSubstr("line 4: expected 'TYPE NAME'"));
    EXPECT_THAT(err("name: x\nID: 1\nbogus\n"), HasSubstr("line 3: unexpected 'bogus'"));
}

TEST(SyscallMeta, ClassifiesArgumentTypes) {
    EXPECT_TRUE(classifySyscallArg("f", "const char *").is_string);
    EXPECT_TRUE(classifySyscallArg("b", "char *").is_string);
    EXPECT_TRUE(classifySyscallArg("f", "const char __user *").is_string);
    auto argv = classifySyscallArg("argv", "const char *const *");
    EXPECT_TRUE(argv.is_string_array);
    EXPECT_TRUE(argv.is_pointer);
    EXPECT_FALSE(argv.is_string);
    auto p = classifySyscallArg("p", "int *");
    EXPECT_TRUE(p.is_pointer);
    EXPECT_FALSE(p.is_string);
    auto n = classifySyscallArg("n", "size_t");
    EXPECT_FALSE(n.is_pointer);
    EXPECT_FALSE(n.is_string);
    EXPECT_FALSE(classifySyscallArg("u", "unsigned char *").is_string);
}

TEST(SyscallMeta, SyscallFromFormats) {
    auto enter = parsed("sys_enter_execve");
    auto exit = parsed("sys_exit_execve");
    auto info = syscallFromFormats(enter, &exit);
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->name, "execve");
    EXPECT_EQ(info->enter_id, 151u);
    EXPECT_EQ(info->exit_id, 150u);
    ASSERT_EQ(info->args.size(), 3u);
    EXPECT_TRUE(info->args[0].is_string);
    EXPECT_TRUE(info->args[1].is_string_array);
    EXPECT_EQ(info->args[2].name, "envp");

    EXPECT_THAT(syscallFromFormats(exit).error().message, HasSubstr("not a sys_enter_ event"));
    TraceEventFormat no_nr = enter;
    no_nr.fields.erase(no_nr.fields.begin());
    EXPECT_THAT(syscallFromFormats(no_nr).error().message, HasSubstr("no __syscall_nr"));
}

TEST(SyscallMeta, BuiltinNamesComeFromTheHeaders) {
    auto names = builtinSyscallNames();
    EXPECT_GT(names.size(), 300u);
    auto t = SyscallTable::builtin();
    EXPECT_FALSE(t.hasArgs());
    ASSERT_NE(t.find("read"), nullptr);
    EXPECT_EQ(t.find("read")->nr, 0);
    EXPECT_EQ(t.find("openat")->nr, 257);
    EXPECT_EQ(t.find("getppid")->nr, 110);
    EXPECT_FALSE(t.find("openat")->has_args);
    EXPECT_EQ(t.find(59)->name, "execve");
    EXPECT_EQ(t.find("no_such_syscall"), nullptr);
}

// The build host's header (Debian 12: Linux 6.1) lacks the syscalls of newer kernels: the
// ptrace backend once refused syscall:futex_wait as unknown on 6.12 and 7.2.
TEST(SyscallMeta, BuiltinNamesKnowSyscallsNewerThanTheHeader) {
    auto t = SyscallTable::builtin();
    for (const auto& [name, nr] :
         std::vector<std::pair<std::string, int>>{{"cachestat", 451},
                                                  {"fchmodat2", 452},
                                                  {"futex_wait", 455},
                                                  {"statmount", 457},
                                                  {"mseal", 462},
                                                  {"rseq_slice_yield", 471},
                                                  {"uretprobe", 335}}) {
        ASSERT_NE(t.find(name), nullptr) << name;
        EXPECT_EQ(t.find(name)->nr, nr) << name;
        EXPECT_EQ(t.find(nr)->name, name);
    }
    // A count, not a syscall, and no name twice.
    EXPECT_EQ(t.find("syscalls"), nullptr);
    std::set<std::string_view> seen;
    for (const auto& n : builtinSyscallNames())
        EXPECT_TRUE(seen.insert(n.name).second) << n.name;
}

TEST(SyscallMeta, TableFromFixtureTracefs) {
    auto r = SyscallTable::fromTracefs(kTracefs);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->hasArgs());
    const SyscallInfo* o = r->find("openat");
    ASSERT_NE(o, nullptr);
    EXPECT_TRUE(o->has_args);
    EXPECT_EQ(o->nr, 257);
    ASSERT_EQ(o->args.size(), 4u);
    EXPECT_EQ(o->args[3].type, "umode_t");
    EXPECT_EQ(r->find("getppid")->args.size(), 0u);
    EXPECT_TRUE(r->find("getppid")->has_args);
    EXPECT_EQ(r->find("mmap")->args.size(), 6u);
    EXPECT_EQ(r->find("clone")->args[2].type, "int *");
    EXPECT_FALSE(r->find("clone")->args[2].is_string);
    EXPECT_TRUE(r->find("write")->args[1].is_string);
    // Syscalls without a fixture keep their number.
    EXPECT_EQ(r->find("futex")->nr, 202);
    EXPECT_FALSE(r->find("futex")->has_args);
}

// load() reads a syscall's formats when it is first found, and gives what fromTracefs gives.
TEST(SyscallMeta, LoadedTableReadsFormatsOnFirstUse) {
    auto eager = SyscallTable::fromTracefs(kTracefs);
    ASSERT_TRUE(eager.ok()) << eager.error().message;
    auto lazy = SyscallTable::load(kTracefs);
    EXPECT_FALSE(lazy.hasArgs());  // nothing read yet
    const SyscallInfo* o = lazy.find("openat");
    ASSERT_NE(o, nullptr);
    EXPECT_TRUE(lazy.hasArgs());
    EXPECT_TRUE(o->has_args);
    EXPECT_EQ(o->nr, 257);
    ASSERT_EQ(o->args.size(), 4u);
    EXPECT_EQ(o->args[3].type, "umode_t");
    EXPECT_EQ(lazy.find("openat"), o);  // found once, same entry after
    EXPECT_EQ(lazy.find(257), o);
    for (const char* name : {"getppid", "mmap", "clone", "write", "futex"}) {
        ASSERT_NE(lazy.find(name), nullptr) << name;
        EXPECT_EQ(lazy.find(name)->has_args, eager->find(name)->has_args) << name;
        EXPECT_EQ(lazy.find(name)->args.size(), eager->find(name)->args.size()) << name;
    }
    EXPECT_EQ(lazy.find("no_such_syscall"), nullptr);
    EXPECT_EQ(lazy.fallbackNote(), "");
    EXPECT_EQ(lazy.all().size(), eager->all().size());
}

// A bad format is named once its syscall is used, not before; a name the build's headers
// lack is still found in tracefs.
TEST(SyscallMeta, LoadedTableNamesProblemsOfWhatItRead) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("probectl-lazy-syscalls-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir / "events/syscalls/sys_enter_read");
    std::ofstream(dir / "events/syscalls/sys_enter_read/format") << "name: sys_enter_read\nID: x\n";
    std::filesystem::create_directories(dir / "events/syscalls/sys_enter_newcall");
    std::ofstream(dir / "events/syscalls/sys_enter_newcall/format")
        << "name: sys_enter_newcall\nID: 9\nformat:\n"
           "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
           "\tfield:unsigned long a;\toffset:16;\tsize:8;\tsigned:0;\n\nprint fmt: \"\"\n";
    auto t = SyscallTable::load(dir.string());
    EXPECT_EQ(t.fallbackNote(), "");
    ASSERT_NE(t.find("read"), nullptr);
    EXPECT_FALSE(t.find("read")->has_args);
    ASSERT_EQ(t.problems().size(), 1u);
    EXPECT_THAT(t.problems()[0], HasSubstr("sys_enter_read/format: format line 2: bad ID"));
    const SyscallInfo* n = t.find("newcall");
    std::filesystem::remove_all(dir);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->args.size(), 1u);
    EXPECT_EQ(t.find("newcall"), n);
}

TEST(SyscallMeta, MissingTracefsFallsBack) {
    auto r = SyscallTable::fromTracefs("/nonexistent/tracefs");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().err, ENOENT);
    EXPECT_THAT(r.error().message, HasSubstr("is tracefs mounted?"));
    auto t = SyscallTable::load("/nonexistent/tracefs");
    EXPECT_FALSE(t.hasArgs());
    EXPECT_EQ(t.find("close")->nr, 3);
}

TEST(SyscallMeta, BrokenFormatFileIsNamed) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("probectl-syscalls-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir / "events/syscalls/sys_enter_bad");
    std::ofstream(dir / "events/syscalls/sys_enter_bad/format") << "name: sys_enter_bad\nID: x\n";
    auto r = SyscallTable::fromTracefs(dir.string());
    std::filesystem::remove_all(dir);
    // Skipped and named, not fatal: the other syscalls keep their arguments.
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->problems().size(), 1u);
    EXPECT_THAT(r->problems()[0], HasSubstr("sys_enter_bad/format: format line 2: bad ID"));
    EXPECT_THAT(r->fallbackNote(), HasSubstr("names and return values only"));
    EXPECT_THAT(r->fallbackNote(), HasSubstr("bad ID"));
}

TEST(SyscallMeta, MissingTracefsIsAnnounced) {
    auto t = SyscallTable::load("/nonexistent/tracefs");
    EXPECT_THAT(t.fallbackNote(), HasSubstr("syscall arguments are unknown"));
    EXPECT_THAT(t.fallbackNote(), HasSubstr("is tracefs mounted?"));
    EXPECT_EQ(SyscallTable::fromTracefs(kTracefs)->fallbackNote(), "");
}

// tracefs is root's alone on most systems: a user who cannot search it is told so, not
// asked whether tracefs is mounted (the note said that for every cause).
TEST(SyscallMeta, UnreadableTracefsSaysRootIsNeeded) {
    const auto root = std::filesystem::temp_directory_path() /
                      ("probectl-tracefs-" + std::to_string(::getpid()));
    std::filesystem::create_directories(root / "events/syscalls/sys_enter_read");
    std::filesystem::permissions(root, std::filesystem::perms::owner_all);
    // Root searches any directory: the check runs as another user in a child.
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(fds[0]);
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0))
            ::_exit(2);
        const std::string note = SyscallTable::load(root.string()).fallbackNote() + "\n" +
                                 SyscallTable::fromTracefs(root.string()).error().message;
        const bool ok = ::write(fds[1], note.data(), note.size()) ==
                        static_cast<ssize_t>(note.size());
        ::_exit(ok ? 0 : 3);
    }
    ::close(fds[1]);
    std::string out;
    char buf[512];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    std::filesystem::remove_all(root);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_THAT(out, HasSubstr("syscall arguments are unknown"));
    EXPECT_THAT(out, HasSubstr("Permission denied"));
    EXPECT_THAT(out, HasSubstr("run as root"));
    EXPECT_THAT(out, ::testing::Not(HasSubstr("is tracefs mounted")));
}

// Kernel 7.2's syscall events append the user strings they copy as __data_loc fields
// ("__data_loc char[] NAME": the brackets after the type): they are not arguments.
TEST(SyscallMeta, DataLocFieldsOfNewKernelsAreNotArguments) {
    const std::string text =
        "name: sys_enter_openat\nID: 760\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
        "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
        "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
        "\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
        "\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"
        "\tfield:__data_loc char[] __filename_val;\toffset:48;\tsize:4;\tsigned:0;\n\n"
        "print fmt: \"dfd: 0x%08lx\", ((unsigned long)(REC->dfd))\n";
    auto ev = parseEventFormat(text);
    ASSERT_TRUE(ev.ok()) << ev.error().message;
    ASSERT_EQ(ev->fields.size(), 6u);
    EXPECT_EQ(ev->fields[5].name, "__filename_val");
    EXPECT_EQ(ev->fields[5].type, "char[]");
    EXPECT_TRUE(ev->fields[5].dynamic);
    EXPECT_EQ(ev->fields[5].size, 4u);
    auto info = syscallFromFormats(*ev);
    ASSERT_TRUE(info.ok()) << info.error().message;
    ASSERT_EQ(info->args.size(), 4u);
    EXPECT_EQ(info->args[1].name, "filename");
    EXPECT_TRUE(info->args[1].is_string);
    EXPECT_EQ(info->args[3].name, "mode");
    // The older spelling, brackets after the name, parses the same way.
    auto old = parseEventFormat(
        "name: x\nID: 1\nformat:\n\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:__data_loc char msg[];\toffset:12;\tsize:4;\tsigned:0;\n");
    ASSERT_TRUE(old.ok()) << old.error().message;
    EXPECT_EQ(old->fields[1].name, "msg");
    EXPECT_TRUE(old->fields[1].dynamic);
}

// x86-64's uname is the kernel's sys_newuname (syscall_64.tbl), whose trace events are
// sys_enter_newuname; sys_uname is the old 32-bit one. Tables name the syscall as x86-64
// programs and strace do, with the renamed function's arguments.
TEST(SyscallMeta, RenamedSyscallsGoByTheirX64Names) {
    EXPECT_EQ(syscallKernelName("uname"), "newuname");
    EXPECT_EQ(syscallKernelName("umount2"), "umount");
    EXPECT_EQ(syscallKernelName("fstat"), "newfstat");
    EXPECT_EQ(syscallKernelName("sendfile"), "sendfile64");
    EXPECT_EQ(syscallKernelName("openat"), "openat");
    EXPECT_EQ(syscallX64Name("newuname"), "uname");
    EXPECT_EQ(syscallX64Name("umount"), "umount2");
    EXPECT_EQ(syscallX64Name("uname"), "uname");
    EXPECT_EQ(syscallKernelNameMisuse("uname"), "");
    EXPECT_EQ(syscallKernelNameMisuse("newuname"),
              "'newuname' is the kernel's name of the x86-64 syscall 'uname': use syscall:uname");

    auto eager = SyscallTable::fromTracefs(kTracefs);
    ASSERT_TRUE(eager.ok()) << eager.error().message;
    auto lazy = SyscallTable::load(kTracefs);
    for (const SyscallTable* t : {&*eager, &lazy}) {
        const SyscallInfo* u = t->find("uname");
        ASSERT_NE(u, nullptr);
        EXPECT_EQ(u->name, "uname");
        EXPECT_EQ(u->nr, 63);
        EXPECT_TRUE(u->has_args);
        ASSERT_EQ(u->args.size(), 1u);
        EXPECT_EQ(u->args[0].type, "struct new_utsname *");
        EXPECT_EQ(t->find("newuname"), nullptr);
    }
}
