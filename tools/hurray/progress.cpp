#include "hurray/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <utility>

#include "hurray/json_out.hpp"

namespace hurray::cli {

Progress::Progress(const Console& console, uint64_t total, std::chrono::steady_clock::duration delay,
                   std::string label)
    : console_(console),
      label_(std::move(label)),
      total_(total),
      delay_(delay),
      start_(std::chrono::steady_clock::now()) {}

void Progress::update(uint64_t done) {
    done_ = done;
    if (!console_.err_is_tty) {
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < delay_ || (drawn_ && now - last_ < std::chrono::milliseconds(100))) {
        return;
    }
    last_ = now;
    draw();
}

void Progress::finish() {
    if (drawn_) {
        draw();
        console_.err << '\n' << std::flush;
    }
}

void Progress::draw() {
    drawn_ = true;
    std::string line = "\r" + label_ + " ";
    if (total_ > 0) {
        const double f = std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
        const auto filled = static_cast<size_t>(f * 30.0);
        line.push_back('[');
        line.append(filled, '=');
        line.append(30 - filled, ' ');
        line.append("] ");
        char pct[16];
        std::snprintf(pct, sizeof pct, "%3d%% ", static_cast<int>(f * 100.0));
        line += pct;
        line.append(bytes_text(done_));
        line.append(" / ");
        line.append(bytes_text(total_));
    } else {
        line.append(bytes_text(done_));
    }
    console_.err << line << "   " << std::flush;
}

}  // namespace hurray::cli
