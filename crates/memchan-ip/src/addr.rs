//! Node addresses: node `id` of the cluster is host `id + 1` of the configured IPv4
//! subnet (default `10.77.0.0/24`: node 0 is 10.77.0.1, node 1 is 10.77.0.2, ...).
//! The subnet's broadcast address, 255.255.255.255 and all hosts (224.0.0.1) go to
//! every node; other multicast (224.0.0.0/4) to the nodes that joined the group.

use std::net::Ipv4Addr;
use std::str::FromStr;

use crate::error::IpError;

/// An IPv4 subnet, `network/prefix`, with at least two host addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subnet {
    network: u32,
    prefix: u8,
}

/// Where a packet goes, by its destination address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// One node (by id).
    Node(u16),
    /// Every node: subnet broadcast, limited broadcast, or all hosts (224.0.0.1).
    All,
    /// The nodes that joined this multicast group (224.0.0.0/4), see [`crate::mcast`].
    Multicast(Ipv4Addr),
    /// Not this subnet, or no node's address.
    Nowhere,
}

impl Subnet {
    /// The default, 10.77.0.0/24.
    pub const DEFAULT: Subnet = Subnet {
        network: 0x0a4d_0000,
        prefix: 24,
    };

    /// Prefix length.
    pub fn prefix(self) -> u8 {
        self.prefix
    }

    fn host_mask(self) -> u32 {
        u32::MAX >> self.prefix
    }

    /// Node `id`'s address, or `None` if the subnet has no host `id + 1` (short of
    /// its broadcast address).
    pub fn addr_of(self, id: u16) -> Option<Ipv4Addr> {
        let host = u32::from(id) + 1;
        (host < self.host_mask()).then(|| Ipv4Addr::from(self.network | host))
    }

    /// The node whose address `a` is, if any.
    pub fn route(self, a: Ipv4Addr) -> Route {
        if a.is_multicast() && a != crate::mcast::ALL_HOSTS {
            return Route::Multicast(a);
        }
        let a = u32::from(a);
        if a == u32::MAX || a >> 28 == 0xe || a == self.network | self.host_mask() {
            return Route::All;
        }
        if a & !self.host_mask() != self.network {
            return Route::Nowhere;
        }
        let host = a & self.host_mask();
        match u16::try_from(host.wrapping_sub(1)) {
            Ok(id) if host != 0 => Route::Node(id),
            _ => Route::Nowhere,
        }
    }
}

impl std::fmt::Display for Subnet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.network), self.prefix)
    }
}

impl FromStr for Subnet {
    type Err = IpError;
    fn from_str(s: &str) -> Result<Subnet, IpError> {
        let bad = |why: &str| IpError::Invalid {
            what: "subnet",
            why: format!("`{s}`: {why}"),
        };
        let (a, p) = s
            .split_once('/')
            .ok_or_else(|| bad("expected A.B.C.D/PREFIX"))?;
        let a: Ipv4Addr = a.parse().map_err(|_| bad("not an IPv4 address"))?;
        let prefix: u8 = p.parse().map_err(|_| bad("prefix is not a number"))?;
        if !(8..=30).contains(&prefix) {
            return Err(bad(
                "prefix must be 8..=30 (room for nodes, a broadcast address)",
            ));
        }
        let net = Subnet {
            network: u32::from(a),
            prefix,
        };
        if net.network & net.host_mask() != 0 {
            return Err(bad("host bits set: give the network address"));
        }
        if a.is_multicast() || a.is_loopback() || a.is_broadcast() {
            return Err(bad("not a unicast subnet"));
        }
        Ok(net)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_addresses_and_routes() {
        let s: Subnet = "10.77.0.0/24".parse().unwrap();
        assert_eq!(s, Subnet::DEFAULT);
        assert_eq!(s.addr_of(0), Some(Ipv4Addr::new(10, 77, 0, 1)));
        assert_eq!(s.addr_of(253), Some(Ipv4Addr::new(10, 77, 0, 254)));
        assert_eq!(s.addr_of(254), None); // would be the broadcast address
        assert_eq!(s.route(Ipv4Addr::new(10, 77, 0, 2)), Route::Node(1));
        assert_eq!(s.route(Ipv4Addr::new(10, 77, 0, 255)), Route::All);
        assert_eq!(s.route(Ipv4Addr::new(255, 255, 255, 255)), Route::All);
        assert_eq!(s.route(Ipv4Addr::new(224, 0, 0, 1)), Route::All);
        let mdns = Ipv4Addr::new(224, 0, 0, 251);
        assert_eq!(s.route(mdns), Route::Multicast(mdns));
        assert_eq!(s.route(Ipv4Addr::new(10, 77, 0, 0)), Route::Nowhere);
        assert_eq!(s.route(Ipv4Addr::new(10, 78, 0, 2)), Route::Nowhere);
        let wide: Subnet = "10.64.0.0/10".parse().unwrap();
        assert_eq!(wide.route(Ipv4Addr::new(10, 64, 1, 1)), Route::Node(256));
    }

    #[test]
    fn bad_subnets_are_refused() {
        for s in [
            "10.77.0.1/24",
            "10.77.0.0",
            "10.77.0.0/31",
            "10.0.0.0/4",
            "x/24",
            "224.0.0.0/24",
        ] {
            assert!(
                matches!(s.parse::<Subnet>(), Err(IpError::Invalid { .. })),
                "{s}"
            );
        }
    }
}
