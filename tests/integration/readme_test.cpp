// Readme.Examples: the README's vm-checked blocks (readme_examples.hpp), run in the VM as a
// reader would paste them: each block in one shell from the top of the source tree, so
// variables it sets carry to its later commands; each command's exit status and output
// held to what the README shows.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "itest_util.hpp"
#include "readme_examples.hpp"

// README.md as it was at build time (embed_text.cmake).
extern const char kReadmeText[];

namespace {

namespace fs = std::filesystem;

// copy=PATH: the build put the host's PATH under readme-copy/ beside the suite, which
// tests/vm/suite copies into the VM with its libraries; it goes over the VM's PATH (a
// busybox applet link) for one block, as `tests/vm/run --copy PATH` does, and the VM's
// own file comes back afterwards.
class Copied {
  public:
    explicit Copied(const std::string& path) : path_(path), saved_(path + ".readme-saved") {
        const std::string src = itest::workload("readme-copy" + path);
        if (!fs::exists(src))
            throw std::runtime_error(
                src + " is missing: the build copies every copy= path of " +
                "README's vm-checked blocks (tests/integration/CMakeLists.txt)");
        if (fs::symlink_status(path_).type() != fs::file_type::not_found) {
            fs::rename(path_, saved_);
            had_ = true;
        }
        fs::create_directories(fs::path(path_).parent_path());
        fs::copy_file(src, path_);
    }
    ~Copied() {
        std::error_code ec;
        fs::remove(path_, ec);
        if (had_)
            fs::rename(saved_, path_, ec);
    }
    Copied(const Copied&) = delete;
    Copied& operator=(const Copied&) = delete;

  private:
    std::string path_, saved_;
    bool had_ = false;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string quoted(const std::string& s) {
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// The README's paths are relative to the top of the tree with the build in build/: the
// suite's files are at their host paths in the VM, so only a build folder elsewhere needs
// the name.
void enterSourceTree() {
    const fs::path top = PROBECTL_SOURCE_DIR;
    const fs::path build = top / "build";
    if (fs::symlink_status(build).type() == fs::file_type::not_found &&
        fs::path(PROBECTL_BINARY_DIR) != build)
        fs::create_directory_symlink(PROBECTL_BINARY_DIR, build);
}

void runExample(const readme::Example& ex) {
    std::vector<std::unique_ptr<Copied>> copies;
    for (const std::string& p : ex.copies)
        copies.push_back(std::make_unique<Copied>(p));
    const std::string dir = "/tmp/readme-examples/" + std::to_string(ex.line);
    fs::remove_all(dir);
    fs::create_directories(dir);
    // One shell per block; each command's output and status in files of its own. The
    // closing brace on its own line keeps a trailing comment from eating it; `wait` reaps
    // what a command started in the background.
    std::string script = "cd " + quoted(PROBECTL_SOURCE_DIR) + " || exit 99\n";
    for (size_t i = 0; i < ex.commands.size(); ++i) {
        const std::string f = dir + "/" + std::to_string(i);
        script += "{ " + ex.commands[i].text + "\n} >" + f + ".out 2>&1 </dev/null\necho $? >" + f +
                  ".rc\n";
    }
    script += "wait\n";
    std::ofstream(dir + "/script.sh") << script;
    const itest::Ran r = itest::sh("timeout -s KILL 900 sh " + dir + "/script.sh");
    for (size_t i = 0; i < ex.commands.size(); ++i) {
        const readme::Command& c = ex.commands[i];
        const std::string f = dir + "/" + std::to_string(i);
        const std::string out = slurp(f + ".out");
        const std::string rc = slurp(f + ".rc");
        const std::string where = "README line " + std::to_string(c.line) + " (" + ex.section +
                                  "):\n$ " + c.text + "\n--- its output ---\n" + out +
                                  "--- end ---\n" + r.out;
        if (rc.empty()) {
            ADD_FAILURE() << "did not finish (block shell exit " << r.status << ")\n" << where;
            continue;
        }
        EXPECT_EQ(std::stoi(rc), c.exit_status) << "exit status\n" << where;
        const std::string why = readme::mismatch(c.shown, out);
        EXPECT_EQ(why, "") << where;
    }
}

TEST(Readme, Examples) {
    const std::vector<readme::Example> examples = readme::extract(kReadmeText);
    ASSERT_FALSE(examples.empty()) << "no vm-checked block in README.md";
    enterSourceTree();
    size_t blocks = 0, commands = 0;
    for (const readme::Example& ex : examples) {
        const std::string where =
            "README block at line " + std::to_string(ex.line) + " (" + ex.section + ")";
        std::string missing;
        for (const std::string& p : ex.needs)
            if (!fs::exists(p))
                missing = p;
        if (!missing.empty()) {
            // Said, not silent: the block is for kernels that have it.
            std::printf("Readme.Examples: skipped %s: this kernel has no %s\n", where.c_str(),
                        missing.c_str());
            continue;
        }
        SCOPED_TRACE(where);
        runExample(ex);
        blocks++;
        commands += ex.commands.size();
    }
    RecordProperty("commands", static_cast<int>(commands));
    std::printf("Readme.Examples: %zu of %zu blocks run, %zu commands\n", blocks, examples.size(),
                commands);
}

}  // namespace
