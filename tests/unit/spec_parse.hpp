// A probe spec the test expects to parse, or to be refused (the spec tests).
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "probectl/probe_spec.hpp"

namespace probectl::test {

inline ProbeSpec goodSpec(std::string_view text) {
    auto r = parseProbeSpec(text);
    EXPECT_TRUE(r.ok()) << text << ": " << (r ? "" : r.error().render());
    return r ? *r : ProbeSpec{};
}

inline SpecError badSpec(std::string_view text) {
    auto r = parseProbeSpec(text);
    EXPECT_FALSE(r.ok()) << text << " parsed";
    return r ? SpecError{} : r.error();
}

}  // namespace probectl::test
