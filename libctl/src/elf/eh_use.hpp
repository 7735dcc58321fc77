// Whether an ELF file uses exception unwinding (C++ throw/catch or cleanups), which a
// kernel uretprobe breaks: the return address it substitutes points at a trampoline with no
// unwind information, so an exception unwinding through the probed frame ends the program.
#pragma once

#include <libelf.h>

#include <string>

namespace probectl {

// What shows the file throws or catches C++ exceptions ("it uses __cxa_throw,
// __gxx_personality_v0"), or "" when nothing does (or the file cannot be read).
std::string exceptionUse(const std::string& path);
// The same of a file open as `elf`.
std::string exceptionUse(Elf* elf);

}  // namespace probectl
