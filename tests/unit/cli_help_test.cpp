// `probectl CMD --help` of every command in the table: plain text (no C++ source syntax
// left over from a raw string), one usage block, and a usage block that names exactly the
// options Boost.Program_options knows for the command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cli.hpp"
#include "probectl/probe_kinds.hpp"

using namespace probectl::cli;

namespace {

std::string helpOf(const Command& c) {
    std::ostringstream os;
    printHelp(c, os);
    return os.str();
}

std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
        n++;
    return n;
}

// The synopsis: from "Usage:" to the first empty line.
std::string synopsis(const std::string& help) {
    const std::size_t begin = help.find("Usage:");
    if (begin == std::string::npos)
        return {};
    return help.substr(begin, help.find("\n\n", begin) - begin);
}

// Every -x and --name the synopsis mentions ("--" alone, before CMD, is not an option).
std::set<std::string> optionsNamed(const std::string& text) {
    std::set<std::string> names;
    static const std::regex re(R"((^|[\s\[|(])(--?[A-Za-z][A-Za-z0-9-]*))");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
         ++it)
        names.insert((*it)[2]);
    return names;
}

}  // namespace

TEST(CliHelp, NoSourceSyntaxAndOneUsage) {
    for (const Command& c : commands()) {
        const std::string help = helpOf(c);
        EXPECT_EQ(count(help, "R\"("), 0u) << c.name << ":\n" << help;
        EXPECT_EQ(count(help, ")\""), 0u) << c.name << ":\n" << help;
        EXPECT_EQ(count(help, "\\n"), 0u) << c.name << ":\n" << help;
        EXPECT_EQ(count(help, "Usage:"), 1u) << c.name << ":\n" << help;
        EXPECT_EQ(count(help, "Options:"), 1u) << c.name;
    }
}

TEST(CliHelp, UsageNamesExactlyTheCommandsOptions) {
    namespace po = boost::program_options;
    for (const Command& c : commands()) {
        const std::string help = helpOf(c);
        const std::set<std::string> named = optionsNamed(synopsis(help));
        std::set<std::string> known;  // every spelling of every option but --help
        const auto desc = c.options();
        for (const auto& opt : desc.options()) {
            if (opt->long_name() == "help")
                continue;
            const std::string lng = "--" + opt->long_name();
            const std::string shrt =
                opt->canonical_display_name(po::command_line_style::allow_dash_for_short);
            const bool has_short = shrt.size() == 2 && shrt[0] == '-';
            EXPECT_TRUE(named.count(lng) || (has_short && named.count(shrt)))
                << c.name << ": the usage does not name " << lng << "\n"
                << synopsis(help);
            known.insert(lng);
            if (has_short)
                known.insert(shrt);
        }
        for (const std::string& n : named)
            EXPECT_TRUE(known.count(n))
                << c.name << ": the usage names " << n << ", which is no option of it\n"
                << synopsis(help);
    }
}

TEST(CliHelp, TheUsageParserFindsMistakes) {
    // The two checks above would pass on anything if these did not hold.
    EXPECT_EQ(optionsNamed("Usage: probectl x [-p PID] [--a|--b-c N] -- CMD [ARGS...]"),
              (std::set<std::string>{"-p", "--a", "--b-c"}));
    EXPECT_EQ(synopsis("head\nUsage: a\n   b\n\nmore -q"), "Usage: a\n   b");
}

// The help of these commands is their man page (tools/man2help.awk): every word of the
// page's DESCRIPTION is in the help, in order, and no scdoc markup is left.
TEST(CliHelp, HelpIsTheManPagesDescription) {
    static const std::regex word(R"([A-Za-z0-9]+)");
    auto words = [](const std::string& s) {
        std::vector<std::string> w;
        for (auto it = std::sregex_iterator(s.begin(), s.end(), word); it != std::sregex_iterator();
             ++it)
            w.push_back(it->str());
        return w;
    };
    for (const char* name : {"record", "report", "list", "remove", "enable", "disable"}) {
        std::ifstream in(std::string(PROBECTL_DOC_DIR) + "/man/probectl-" + name + ".8.scd");
        ASSERT_TRUE(in) << name;
        std::string line, description;
        bool on = false;
        while (std::getline(in, line)) {
            if (line.starts_with("# "))
                on = line == "# DESCRIPTION";
            else if (on)
                description += line + "\n";
        }
        ASSERT_FALSE(description.empty()) << name;
        const std::string help = helpOf(*findCommand(name));
        // *probectl-trace*(8) reads 'probectl trace' in the help.
        description = std::regex_replace(description, std::regex(R"(\*\([0-9]\))"), "");
        std::vector<std::string> page = words(description), text = words(help);
        std::size_t at = 0;
        for (const std::string& w : page) {
            while (at < text.size() && text[at] != w)
                ++at;
            ASSERT_LT(at, text.size()) << name << ": '" << w << "' of the page is not in --help";
            ++at;
        }
        const std::string head = help.substr(0, help.find("Options:"));
        EXPECT_EQ(count(head, "*"), 0u) << name << ":\n" << head;
        EXPECT_EQ(count(head, "++"), 0u) << name << ":\n" << head;
        EXPECT_EQ(count(head, "```"), 0u) << name << ":\n" << head;
    }
}

// `probectl --help` lists a spec form of every kind the spec grammar has.
TEST(CliHelp, MainHelpNamesEverySpecKind) {
    std::ostringstream os;
    printMainHelp(os);
    for (const auto& k : probectl::probeKinds())
        EXPECT_THAT(os.str(), testing::HasSubstr("\n  " + std::string(k.name) + ":")) << k.name;
}

namespace {

// `probectl help help nosuch` as the shell runs it: exit status and both streams, merged.
std::pair<int, std::string> runProbectl(const std::string& args) {
    FILE* p = ::popen((std::string(PROBECTL_BIN) + " " + args + " 2>&1").c_str(), "r");
    if (!p)
        return {-1, ""};
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
        out.append(buf, n);
    const int st = ::pclose(p);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

}  // namespace

// `probectl help nosuch` once printed the main help and exited 0.
TEST(MainHelp, HelpOfAnUnknownCommandIsAUsageError) {
    auto [rc, out] = runProbectl("help nosuch");
    EXPECT_EQ(rc, kExitUsage);
    EXPECT_THAT(out, ::testing::HasSubstr("no help for 'nosuch': no such command"));
    EXPECT_THAT(out, ::testing::HasSubstr("Try 'probectl --help'."));
    auto [ok, help] = runProbectl("help trace");
    EXPECT_EQ(ok, kExitOk);
    EXPECT_THAT(help, ::testing::HasSubstr("Usage: probectl trace"));
}

// `probectl --backend=ptrace count ...` said "unknown command '--backend=ptrace'": an option
// before the command is named, with the command line that puts it after the command.
TEST(MainHelp, AnOptionBeforeTheCommandIsNamedWithWhereItGoes) {
    auto [rc, out] = runProbectl("--backend=ptrace count syscall:getppid -- true");
    EXPECT_EQ(rc, kExitUsage);
    EXPECT_EQ(out,
              "probectl: '--backend=ptrace' is an option of a command: put it after the command "
              "(probectl count --backend=ptrace ...)\nTry 'probectl count --help'.\n");
    // Every option before the command moves, in the order given, with its value.
    std::tie(rc, out) = runProbectl("-p 1 -f trace syscall:getppid");
    EXPECT_EQ(rc, kExitUsage);
    EXPECT_THAT(out, ::testing::HasSubstr("'-p' is an option of a command: put it after the "
                                          "command (probectl trace -p 1 -f ...)"));
    // No command at all: what an option goes after.
    std::tie(rc, out) = runProbectl("--backend=ptrace");
    EXPECT_EQ(rc, kExitUsage);
    EXPECT_EQ(out,
              "probectl: '--backend=ptrace' is an option of a command: put it after the command "
              "(probectl COMMAND --backend=ptrace ...)\nTry 'probectl --help'.\n");
    // A word that is neither stays an unknown command.
    std::tie(rc, out) = runProbectl("nosuch");
    EXPECT_THAT(out, ::testing::HasSubstr("unknown command 'nosuch'"));
}
