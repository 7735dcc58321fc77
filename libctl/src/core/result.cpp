#include "probectl/result.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace probectl {

namespace {

bool containsNoCase(std::string_view text, std::string_view what) {
    return std::search(text.begin(), text.end(), what.begin(), what.end(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) ==
                      std::tolower(static_cast<unsigned char>(b));
           }) != text.end();
}

// When libc's text adds nothing or misleads next to the message. Misleading: EILSEQ is
// "Invalid or incomplete multibyte or wide character", ENOTUNIQ "Name not unique on
// network", ERANGE "Numerical result out of range", EPROTO "Protocol error", EBADMSG "Bad
// message"; an ENOENT about a name ("unknown kernel symbol 'x'", "family ... not found")
// reads like a file error. Nothing to add: the message says it already ("x: No such file or
// directory", "no such process"), says what is missing or why ("x: no function 'f' in
// ...", "struct s has no member 'm'", "0x10 is ambiguous"), ends in its own hint ("...
// (sudo insmod ...)", "...?"), or carries the kernel's own explanation (extack).
bool strerrorAddsNothing(int err, const std::string& message, const std::string& extack,
                         std::string_view text) {
    if (containsNoCase(message, text) || !extack.empty())
        return true;
    if (message.ends_with(')') || message.ends_with('?'))
        return true;
    switch (err) {
        case EILSEQ:
        case ENOTUNIQ:
        case ERANGE:
        case EPROTO:
        case EBADMSG:
            return true;
        case ENOENT:
            // ...or says what is missing ("x: no function 'f' in ...", "matches no symbol")
            return containsNoCase(message, "unknown") || containsNoCase(message, "not found") ||
                   containsNoCase(message, "no such") || containsNoCase(message, ": no ") ||
                   containsNoCase(message, " matches no ");
        case EINVAL:
            // A refusal that explains itself; "Invalid argument" stays after bare context
            // ("add probe kprobe:f").
            return containsNoCase(message, " has no ") ||
                   containsNoCase(message, " is ambiguous") ||
                   containsNoCase(message, " is an IFUNC") ||
                   containsNoCase(message, " is data (") ||
                   containsNoCase(message, ": not a regular file");
        case ENOEXEC:
            // Every such refusal says what the file lacks ("not an ELF file", "no PT_LOAD
            // segment"); "Exec format error" is a vaguer copy of it.
            return true;
        default:
            return false;
    }
}

}  // namespace

std::string Error::describe() const {
    // A usage error is about the caller's input: no errno explains that.
    if (err == 0 || (usage && !message.empty()))
        return message;
    std::string s = std::strerror(err);
    if (message.empty())
        return s;
    if (strerrorAddsNothing(err, message, extack, s))
        return message;
    return message + " (" + s + ")";
}

Error makeError(int err, std::string message, std::string extack) {
    return Error{err, std::move(message), std::move(extack)};
}

}  // namespace probectl
