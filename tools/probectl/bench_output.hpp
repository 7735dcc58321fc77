// probectl bench: the report (bench_output.cpp).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "bench.hpp"

namespace probectl::cli::bench {

// One's closing figures: the ratio of two tracers' overhead per hit on one
// workload (NAN when either did not run).
struct Figure {
    std::string name, workload, num_tracer, den_tracer, aim;
    double num_ns, den_ns, value;
};
std::vector<Figure> figures(const std::vector<Row>& rows);

// The side-by-side table: hits seen, whether exactly N, ns per hit, overhead per hit over
// untraced (ns), and that overhead as a multiple of kernel-record's on the same workload.
void printTable(std::ostream& os, const std::vector<Row>& rows);
// Skipped tracers with why, failed runs with what, and tracers that did not see N hits.
void printProblems(std::ostream& os, const std::vector<Row>& rows);
void printFigures(std::ostream& os, const std::vector<Row>& rows);
// Which tracers do the same work, so which ratios compare like with like.
void printEqualWork(std::ostream& os);
// One line per row, the table's figures unrounded plus skip/error text (RFC 4180 quoting).
void writeCsv(std::ostream& os, const std::vector<Row>& rows);
// When no tracer measured anything (each was skipped or failed): why, one clause per
// distinct reason with the tracers it stopped; "" when at least one ran.
std::string noTracerRan(const std::vector<Row>& rows);
// DIR/bench.dat and DIR/bench.gp; `gnuplot bench.gp` in DIR draws bench.png and bench.svg.
void writePlot(const std::string& dir, const std::vector<Row>& rows, const std::string& title);
// Runs gnuplot on DIR/bench.gp and says which files it drew ("bench.png, bench.svg"), or
// why none: no gnuplot, or a failed run, which leaves no image behind, not even empty.
std::string drawPlot(const std::string& dir);

}  // namespace probectl::cli::bench
