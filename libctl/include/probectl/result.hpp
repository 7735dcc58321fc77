// The one error model of libctl: recoverable failures are returned as Result<T>,
// an expected-like value-or-Error (C++20 has no std::expected). Exceptions are
// reserved for programming errors (value() on an error, error() on a value).
#pragma once

// Every public header includes this one first among probectl's, so an older -std gets this
// one line before the errors its C++20 code would cause (std::span, concepts, ...).
#if __cplusplus < 202002L
#error "probectl's headers need C++20: compile with -std=c++20 (or gnu++20, or later)"
#endif

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// A failure as seen by the caller.
//  err:     positive errno value (EINVAL, ENOENT, EPERM, ...) of the failure; 0 when no
//           errno is its cause and the message says all (a name with the one to use
//           instead, a file that holds nothing to read): describe() then adds no errno
//           text, which would read as the cause. Kernel errors carry the errno the kernel
//           returned in its netlink ack.
//  message: human text naming the thing at fault ("kprobe:foo: ..."), with the kernel's
//           extack text appended when there is one, and a hint where the errno is common
//           ("is probectl.ko loaded?", "needs CAP_SYS_ADMIN or CAP_PERFMON").
//  extack:  the kernel's extack text alone (NLMSGERR_ATTR_MSG), empty when the kernel sent
//           none; lets tests assert on the kernel's own wording.
//  usage:   the caller's input is wrong whatever the system (a spec or predicate that
//           does not parse or type-check, a spec the backend cannot run), not the system's
//           refusal; the CLI exits 2 for these, 1 for the others.
struct Error {
    int err = 0;
    std::string message;
    std::string extack;
    bool usage = false;

    // "message (strerror(err))", the form printed by the CLI; just "message" when libc's text
    // would repeat or contradict it: the message holds it already, ends in its own hint
    // (')' or '?'), or comes with the kernel's extack; errnos whose text misleads (EILSEQ,
    // ENOTUNIQ, ERANGE, EPROTO, EBADMSG, ENOEXEC; ENOENT when the message says "unknown", "not
    // found" or "no such"), or the error is a usage error (about the input, not the system).
    std::string describe() const;
};

// Builds an Error; the helper keeps call sites short.
Error makeError(int err, std::string message, std::string extack = {});

// Thrown only by Result::value()/error() misuse: a bug in the caller, not a runtime failure.
class BadResultAccess : public std::logic_error {
  public:
    using std::logic_error::logic_error;
};

// Value-or-error. Implicitly constructible from T and from E, so functions can
// `return value;` or `return makeError(...);`.
template <class T, class E = Error>
class [[nodiscard]] Result {
  public:
    Result(const T& v) : v_(std::in_place_index<0>, v) {}
    Result(T&& v) : v_(std::in_place_index<0>, std::move(v)) {}
    Result(const E& e) : v_(std::in_place_index<1>, e) {}
    Result(E&& e) : v_(std::in_place_index<1>, std::move(e)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        check(true);
        return std::get<0>(v_);
    }
    const T& value() const& {
        check(true);
        return std::get<0>(v_);
    }
    T&& value() && {
        check(true);
        return std::get<0>(std::move(v_));
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const E& error() const& {
        check(false);
        return std::get<1>(v_);
    }
    E&& error() && {
        check(false);
        return std::get<1>(std::move(v_));
    }

  private:
    void check(bool want_value) const {
        if (ok() != want_value)
            throw BadResultAccess(want_value ? "Result::value() on an error"
                                             : "Result::error() on a value");
    }
    std::variant<T, E> v_;
};

// Result<void>: success or an error.
template <class E>
class [[nodiscard]] Result<void, E> {
  public:
    Result() = default;
    Result(const E& e) : e_(e), ok_(false) {}
    Result(E&& e) : e_(std::move(e)), ok_(false) {}

    bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    void value() const {
        if (!ok_)
            throw BadResultAccess("Result<void>::value() on an error");
    }
    const E& error() const& {
        if (ok_)
            throw BadResultAccess("Result<void>::error() on a value");
        return e_;
    }

  private:
    E e_{};
    bool ok_ = true;
};

}  // namespace probectl
#pragma GCC visibility pop
