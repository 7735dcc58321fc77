// Adding a command's specs to its Tracer with globs expanded (expand.hpp): one line per
// glob on `err` saying how many of its names attached and why the rest did not, and with
// `verbose` each skipped name; and every note the tracer has on what it attached
// ("probectl: note: ...", Tracer::takeNotes). A spec given more than once, word for word, is
// added once, with one note saying how many times it was given.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "probectl/expand.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/result.hpp"
#include "probectl/tracer.hpp"
#include "probectl/user_target.hpp"

namespace probectl::cli {

// The number of probes added. Errors: the first spec that attached nothing. `max_entries`:
// --max-entries was given (count, hist, latency), which sizes each probe's map as asked, so a
// refusal over max_map_kb also suggests lowering it.
// `stop`, asked before each spec and between a glob's names: true (a stop signal came) ends
// the attaching there, with a note; the probes added so far are counted, and the caller ends
// the run as the signal says. `cache`: user-space globs' expansions to reuse and keep.
Result<std::size_t> attachSpecs(Tracer& tracer, const std::vector<ProbeSpec>& specs, pid_t pid,
                                bool verbose, std::ostream& err, bool max_entries = false,
                                const std::function<bool()>& stop = {},
                                std::shared_ptr<UserResolveCache> cache = nullptr);

// A glob's one-line summary (AttachReport::summary) and, for each refusal over a module
// limit, what to change to attach more: "...; 51146 over the module's max_map_kb limit;
// to attach more: raise the module parameter max_map_kb (...) or lower --max-entries".
std::string attachSummary(const AttachReport& r, bool max_entries);

}  // namespace probectl::cli
