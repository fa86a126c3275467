// SPDX-License-Identifier: Apache-2.0
// HttpOptions for tests against servers on 127.0.0.1: short timeouts and
// backoff, two retries, so that a failing case ends in about a second.
#pragma once

#include <chrono>

#include "hurray/http/http_range_source.hpp"

namespace hurray::test {

/// Connect 2 s, idle 1 s, 2 retries 10 ms apart.
inline HttpOptions quick() {
    HttpOptions o;
    o.connect_timeout = std::chrono::seconds(2);
    o.idle_timeout = std::chrono::seconds(1);
    o.max_retries = 2;
    o.retry_backoff = std::chrono::milliseconds(10);
    return o;
}

}  // namespace hurray::test
