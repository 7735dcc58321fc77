// protoc --decode's text output read back into a tree, for tests that check a binary
// protobuf file through the schema it was written against.
#pragma once

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace prototest {

struct Node {
    std::string key, value;  // value: a scalar's text (strings keep their quotes)
    std::vector<Node> children;
    // Children named `k`.
    std::vector<const Node*> all(const std::string& k) const {
        std::vector<const Node*> out;
        for (const auto& c : children)
            if (c.key == k)
                out.push_back(&c);
        return out;
    }
    const Node* get(const std::string& k) const {
        for (const auto& c : children)
            if (c.key == k)
                return &c;
        return nullptr;
    }
    std::string str(const std::string& k) const {
        const Node* n = get(k);
        return n ? n->value : std::string();
    }
};

inline Node parseTextProto(const std::string& text) {
    Node root;
    std::vector<Node*> stack{&root};
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        const auto b = line.find_first_not_of(' ');
        if (b == std::string::npos)
            continue;
        line = line.substr(b);
        if (line == "}") {
            stack.pop_back();
            continue;
        }
        Node n;
        if (line.size() > 2 && line.substr(line.size() - 2) == " {") {
            n.key = line.substr(0, line.size() - 2);
            stack.back()->children.push_back(std::move(n));
            stack.push_back(&stack.back()->children.back());
            continue;
        }
        const auto colon = line.find(": ");
        n.key = line.substr(0, colon);
        n.value = colon == std::string::npos ? "" : line.substr(colon + 2);
        stack.back()->children.push_back(std::move(n));
    }
    return root;
}

// Runs a shell command, returns its stdout; `status` gets its exit status.
inline std::string run(const std::string& cmd, int* status) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p)
        return out;
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;)
        out.append(buf, n);
    *status = pclose(p);
    return out;
}

}  // namespace prototest
