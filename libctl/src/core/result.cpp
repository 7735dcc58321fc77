#include "probectl/result.hpp"

#include <cerrno>
#include <cstring>

namespace probectl {

namespace {

// errnos whose libc text would mislead next to our messages: EILSEQ is "Invalid or
// incomplete multibyte or wide character", ENOTUNIQ "Name not unique on network", ERANGE
// "Numerical result out of range". The message says what is wrong; the code adds nothing.
bool strerrorMisleads(int err, const std::string& message) {
    switch (err) {
        case EILSEQ:
        case ENOTUNIQ:
        case ERANGE:
            return true;
        case ENOENT:
            // "unknown kernel symbol 'x' (No such file or directory)" reads like a file error.
            return message.find("unknown") != std::string::npos;
        default:
            return false;
    }
}

}  // namespace

std::string Error::describe() const {
    if (err == 0)
        return message;
    std::string s = std::strerror(err);
    if (message.empty())
        return s;
    if (strerrorMisleads(err, message))
        return message;
    return message + " (" + s + ")";
}

Error makeError(int err, std::string message, std::string extack) {
    return Error{err, std::move(message), std::move(extack)};
}

}  // namespace probectl
