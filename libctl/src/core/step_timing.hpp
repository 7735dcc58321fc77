// PROBECTL_TIMING: a diagnostic of where start-up and tear-down time goes. With the
// variable set (to anything but "" or "0"), each timed step prints one line to stderr:
//   probectl: timing: STEP  DURATION ms  (end at T ms)
// T counts from the library's load (after the dynamic loader, before main). Unset, a
// timer costs one load of a cached flag.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace probectl::detail {

// Whether PROBECTL_TIMING asks for the lines (read once).
bool timingOn();

// Prints `step`'s line for a step that began at `start`.
void reportStep(std::string_view step, std::chrono::steady_clock::time_point start);

// Times the scope it lives in: one line when it ends (or at done()).
class StepTimer {
  public:
    explicit StepTimer(std::string step) : on_(timingOn()) {
        if (on_) {
            step_ = std::move(step);
            start_ = std::chrono::steady_clock::now();
        }
    }
    StepTimer(const StepTimer&) = delete;
    StepTimer& operator=(const StepTimer&) = delete;
    ~StepTimer() { done(); }
    // Ends the step before the scope does (no second line).
    void done() {
        if (on_)
            reportStep(step_, start_);
        on_ = false;
    }

  private:
    bool on_;
    std::string step_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace probectl::detail
