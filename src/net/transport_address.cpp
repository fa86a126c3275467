// SPDX-License-Identifier: Apache-2.0
#include "hurray/net/transport_address.hpp"

#include <charconv>

namespace hurray::net {

namespace {

constexpr std::string_view kTcpScheme = "hurray://";
constexpr std::string_view kUnixScheme = "hurray+unix://";

Error bad_address(std::string_view text, std::string_view why) {
    return {ErrorCode::kInvalidArgument, "server address '" + std::string(text) + "': " + std::string(why)};
}

/// `HOST:PORT`, `HOST`, `[V6]:PORT`, `[V6]`, `:PORT`.
Result<TransportAddress> parse_tcp(std::string_view whole, std::string_view rest) {
    TransportAddress a;
    std::string_view host = rest;
    std::string_view port;
    if (!rest.empty() && rest.front() == '[') {
        const size_t close = rest.find(']');
        if (close == std::string_view::npos) {
            return bad_address(whole, "'[' without ']'");
        }
        host = rest.substr(1, close - 1);
        std::string_view after = rest.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') {
                return bad_address(whole, "expected ':PORT' after ']'");
            }
            port = after.substr(1);
            if (port.empty()) {
                return bad_address(whole, "empty port");
            }
        }
    } else {
        const size_t colon = rest.rfind(':');
        if (colon != std::string_view::npos) {
            if (rest.find(':') != colon) {
                return bad_address(whole, "an IPv6 host must be in brackets ([::1]:7447)");
            }
            host = rest.substr(0, colon);
            port = rest.substr(colon + 1);
            if (port.empty()) {
                return bad_address(whole, "empty port");
            }
            if (host.empty()) {
                host = "127.0.0.1";
            }
        }
    }
    if (host.empty()) {
        return bad_address(whole, "empty host");
    }
    if (host.find('/') != std::string_view::npos) {
        return bad_address(whole, "a host has no '/' (a socket path is written unix:PATH)");
    }
    a.host = std::string(host);
    if (!port.empty()) {
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc() || end != port.data() + port.size() || value > 65535) {
            return bad_address(whole, "port '" + std::string(port) + "' is not a number in 0-65535");
        }
        a.port = static_cast<uint16_t>(value);
    }
    return a;
}

}  // namespace

std::string TransportAddress::to_string() const {
    if (kind == Kind::kUnix) {
        return std::string(kUnixScheme) + path;
    }
    const bool v6 = host.find(':') != std::string::npos;
    return std::string(kTcpScheme) + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool is_server_url(std::string_view text) noexcept {
    return text.starts_with(kTcpScheme) || text.starts_with(kUnixScheme);
}

Result<TransportAddress> parse_transport_address(std::string_view text) {
    std::string_view rest = text;
    bool unix_socket = false;
    if (rest.starts_with(kUnixScheme)) {
        rest.remove_prefix(kUnixScheme.size());
        unix_socket = true;
    } else if (rest.starts_with(kTcpScheme)) {
        rest.remove_prefix(kTcpScheme.size());
        while (!rest.empty() && rest.back() == '/') {
            rest.remove_suffix(1);
        }
    } else if (rest.starts_with("unix:")) {
        rest.remove_prefix(5);
        unix_socket = true;
    } else if (const size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
        return bad_address(text, "unknown scheme '" + std::string(rest.substr(0, scheme)) +
                                     "://' (hurray:// or hurray+unix://)");
    }
    if (unix_socket) {
        if (rest.empty()) {
            return bad_address(text, "empty socket path");
        }
        TransportAddress a;
        a.kind = TransportAddress::Kind::kUnix;
        a.host.clear();
        a.port = 0;
        a.path = std::string(rest);
        return a;
    }
    if (rest.empty()) {
        return bad_address(text, "empty address");
    }
    return parse_tcp(text, rest);
}

}  // namespace hurray::net
