#include "probectl/result.hpp"

#include <cstring>

namespace probectl {

std::string Error::describe() const {
    if (err == 0)
        return message;
    // strerror text is appended unless the message already ends with it (kernel errors
    // often say the same thing twice otherwise).
    std::string s = std::strerror(err);
    if (message.empty())
        return s;
    return message + " (" + s + ")";
}

Error makeError(int err, std::string message, std::string extack) {
    return Error{err, std::move(message), std::move(extack)};
}

}  // namespace probectl
