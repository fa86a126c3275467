// SPDX-License-Identifier: Apache-2.0
/// @file
/// Where a Hurray tensor server listens and a client connects: a TCP host and
/// port or a Unix socket path, written as text the way `hurray serve`,
/// `hurray fetch` and `hurray ls` take it.
#pragma once

#include "hurray/net/export.hpp"

#include <cstdint>
#include <string>
#include <string_view>

#include "hurray/core/result.hpp"

namespace hurray::net {

/// The port `hurray serve` listens on when an address names none.
inline constexpr uint16_t kDefaultServerPort = 7447;

/// A parsed server address.
struct HURRAY_NET_EXPORT TransportAddress {
    /// TCP or a Unix-domain stream socket.
    enum class Kind : uint8_t {
        kTcp,   ///< `host` and `port`.
        kUnix,  ///< `path`.
    };
    /// Which of the two.
    Kind kind = Kind::kTcp;
    /// A TCP host: an IPv4 or IPv6 literal or a name to resolve.
    std::string host = "127.0.0.1";
    /// A TCP port (0: any free port, when listening).
    uint16_t port = kDefaultServerPort;
    /// A Unix socket's path.
    std::string path;

    /// The address as text that `parse_transport_address` reads back:
    /// `hurray://HOST:PORT` (IPv6 hosts in brackets) or `hurray+unix://PATH`.
    [[nodiscard]] std::string to_string() const;
};

/// Reads an address: `HOST:PORT`, `HOST` (port `kDefaultServerPort`),
/// `[IPV6]:PORT`, `:PORT` (host 127.0.0.1), `unix:PATH`, each optionally
/// behind `hurray://` (TCP) or with `hurray+unix://PATH` for a socket path.
/// Fails with `kInvalidArgument` naming what is wrong (an empty host or path,
/// a port that is not a number in 0-65535, a scheme other than these).
[[nodiscard]] HURRAY_NET_EXPORT Result<TransportAddress> parse_transport_address(std::string_view text);

/// Whether `text` starts with `hurray://` or `hurray+unix://`: the CLI's test
/// for "a server, not a file".
[[nodiscard]] HURRAY_NET_EXPORT bool is_server_url(std::string_view text) noexcept;

}  // namespace hurray::net
