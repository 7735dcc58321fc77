// The text of a file under the unit tests' fixtures/ (empty when it is missing).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace probectl::test {

inline std::string fixtureText(const std::string& name) {
    std::ifstream in(std::string(PROBECTL_FIXTURES) + "/" + name);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace probectl::test
