// README examples that the in-VM suite runs (Readme.Examples): extraction of the marked
// blocks and the rule that compares a command's output with the output the README shows.
//
// A marked block is a fenced block whose info string holds the word `vm-checked`
// (```` ```console vm-checked [copy=PATH]... ````). In it, a line starting with `$ ` is a
// command (a line ending in `\` continues it); the lines up to the next command are the
// output shown for it. A trailing `# exit N` on the command says its exit status (default
// 0). `copy=PATH` runs the block with the host's PATH placed over the VM's, as
// `tests/vm/run --copy PATH` does; `needs=PATH` runs it only on kernels where PATH exists
// (`needs=/sys/kernel/btf/vmlinux`: the debug kernel has no BTF).
//
// Shown output is checked line by line: every shown line must match one line of the
// output, in order; lines the README leaves out are allowed (trimmed output). Runs of
// spaces count as one. In a shown line `...` matches any text, and the values no run can
// repeat match any value of their form: hex numbers of 8 or more digits (addresses),
// numbers with a fraction or a time unit (times, latencies), the `[CPU]` column, the TID
// column of event lines, the number after the word `pid` and the thread id that starts a
// `-f` strace line (a call or a `+++` end). A line that is only `...` marks an elision and
// matches nothing itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace readme {

struct Command {
    std::string text;  // as written after `$ `, continuation lines included
    int line = 0;      // README line of the `$ `
    int exit_status = 0;
    std::vector<std::string> shown;  // output lines shown after it
};

struct Example {
    std::string section;  // the `## ` heading above the block
    int line = 0;         // README line of the opening fence
    std::vector<std::string> copies;
    std::vector<std::string> needs;
    std::vector<Command> commands;
};

// The marked blocks of a Markdown text; throws std::runtime_error naming the line of a
// marked block that cannot be run (output before the first command, an unknown option,
// no command, no closing fence).
std::vector<Example> extract(std::string_view markdown);

// The regular expression (ECMAScript) a shown line stands for, over a line whose runs of
// spaces were made one space and whose ends were trimmed.
std::string lineRegex(std::string_view shown);
bool lineMatches(std::string_view shown, std::string_view actual);

// "" when every shown line matches a line of `actual`, in order; else which one did not.
std::string mismatch(const std::vector<std::string>& shown, std::string_view actual);

}  // namespace readme
