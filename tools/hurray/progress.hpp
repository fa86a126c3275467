#pragma once
/// @file
/// A progress bar on the console's error stream, for long-running commands (`convert`, `get`).

#include <chrono>
#include <cstdint>
#include <string>

#include "hurray/cli.hpp"

namespace hurray::cli {

/// A one-line progress bar drawn on console.err, only when console.err_is_tty and once the
/// work has run `delay` (one second by default); redrawn at most every 100 ms.
/// @code
/// Progress progress(console, total_bytes);
/// progress.update(done_bytes);   // as the work goes on
/// progress.finish();             // ends the line if a bar was drawn
/// @endcode
class Progress {
public:
    /// A bar for `total` units of work (0: unknown, only the count is shown), drawn after
    /// `label` ("converting", "downloading").
    Progress(const Console& console, uint64_t total,
             std::chrono::steady_clock::duration delay = std::chrono::seconds(1), std::string label = "converting");
    /// Records that `done` bytes are done; draws when due.
    void update(uint64_t done);
    /// Draws the final state and ends the line, when a bar was drawn.
    void finish();
    /// Whether a bar was drawn.
    [[nodiscard]] bool drawn() const noexcept { return drawn_; }

private:
    void draw();

    const Console& console_;
    std::string label_;
    uint64_t total_;
    std::chrono::steady_clock::duration delay_;
    uint64_t done_ = 0;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace hurray::cli
