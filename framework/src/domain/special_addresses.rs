//! Addresses a server-side request must not reach unless the operator allows it: every block
//! of IANA's IPv4 and IPv6 Special-Purpose Address Registries that is not globally
//! reachable (loopback, private, shared, link-local, documentation, benchmarking, reserved,
//! discard-only, ...), multicast and broadcast, and IPv6 forms that carry an IPv4 address
//! (IPv4-mapped, IPv4-compatible, NAT64, 6to4), judged by the address they carry or refused
//! whole where that address cannot be trusted to be where it says.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IPv4 blocks that are not globally reachable (RFC 6890 and its updates), with multicast
/// and the limited broadcast address.
const V4: [([u8; 4], u8); 16] = [
    ([0, 0, 0, 0], 8),          // "this network"
    ([10, 0, 0, 0], 8),         // private
    ([100, 64, 0, 0], 10),      // shared address space (carrier-grade NAT)
    ([127, 0, 0, 0], 8),        // loopback
    ([169, 254, 0, 0], 16),     // link-local
    ([172, 16, 0, 0], 12),      // private
    ([192, 0, 0, 0], 24),       // IETF protocol assignments
    ([192, 0, 2, 0], 24),       // documentation (TEST-NET-1)
    ([192, 88, 99, 0], 24),     // 6to4 relay anycast (deprecated)
    ([192, 168, 0, 0], 16),     // private
    ([198, 18, 0, 0], 15),      // benchmarking
    ([198, 51, 100, 0], 24),    // documentation (TEST-NET-2)
    ([203, 0, 113, 0], 24),     // documentation (TEST-NET-3)
    ([224, 0, 0, 0], 4),        // multicast
    ([240, 0, 0, 0], 4),        // reserved for future use
    ([255, 255, 255, 255], 32), // limited broadcast
];

/// IPv6 blocks that are not globally reachable, with multicast and deprecated forms.
/// IPv4-mapped and NAT64 addresses are judged by the IPv4 address they carry (see
/// [`is_special`]); IPv4-compatible and 6to4 ones are refused whole.
const V6: [([u16; 8], u8); 13] = [
    ([0, 0, 0, 0, 0, 0, 0, 0], 96), // unspecified, loopback, IPv4-compatible
    ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), // local-use IPv4/IPv6 translation
    ([0x100, 0, 0, 0, 0, 0, 0, 0], 64), // discard-only
    ([0x100, 0, 0, 1, 0, 0, 0, 0], 64), // dummy prefix
    ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23), // IETF protocol assignments (Teredo, ...)
    ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), // documentation
    ([0x2002, 0, 0, 0, 0, 0, 0, 0], 16), // 6to4 (deprecated)
    ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), // documentation
    ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16), // segment routing SIDs
    ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), // unique local
    ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), // link-local
    ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), // site-local (deprecated)
    ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), // multicast
];

/// The NAT64 well-known prefix `64:ff9b::/96`: the last 32 bits are an IPv4 address.
const NAT64: ([u16; 8], u8) = ([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);

fn in_v4(ip: Ipv4Addr, (net, len): ([u8; 4], u8)) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(ip: Ipv6Addr, (net, len): ([u16; 8], u8)) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(ip) & mask == u128::from(Ipv6Addr::from(net)) & mask
}

/// Whether `ip` is special-purpose: not to be reached by a request the service makes for
/// someone else (a webhook), unless the operator allows it.
pub fn is_special(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => V4.iter().any(|block| in_v4(v4, *block)),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_special(IpAddr::V4(v4));
            }
            if in_v6(v6, NAT64) {
                let [.., a, b] = v6.segments();
                let carried = Ipv4Addr::from((u32::from(a) << 16) | u32::from(b));
                return is_special(IpAddr::V4(carried));
            }
            V6.iter().any(|block| in_v6(v6, *block))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_special;

    fn special(text: &str) -> bool {
        is_special(text.parse().expect("an address"))
    }

    #[test]
    fn every_special_purpose_block_is_refused() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.5.4",
            "169.254.1.1",
            "0.0.0.0",
            "100.64.0.1",
            "192.0.0.1",
            "192.0.2.7",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.1",
            "203.0.113.9",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::127.0.0.1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "100::1",
            "2001::1",
            "2001:db8::1",
            "2002:7f00:1::1",
            "2002:5db8:d822::1",
            "3fff::1",
            "fd00::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
        ] {
            assert!(special(ip), "{ip}");
        }
    }

    #[test]
    fn public_addresses_pass_also_through_nat64() {
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "192.0.3.1",
            "198.20.0.1",
            "2606:2800:220:1::1",
            "2a00:1450:4001::1",
            "64:ff9b::5db8:d822",
            "::ffff:93.184.216.34",
        ] {
            assert!(!special(ip), "{ip}");
        }
    }
}
