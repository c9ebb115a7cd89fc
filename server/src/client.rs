//! Fair shares: who a client is (its IP address) and how much one address may hold at once.
//!
//! The global caps (`--max-sockets`, `--max-runs`) keep the server alive; these keep it
//! *shared*: one script, or one curious student with a loop, cannot take every socket or
//! every run slot from the rest of the room.
//!
//! A client is its address, taken from the TCP peer, or, behind a reverse proxy, from the
//! header the operator names with `--client-ip-header`. That header is only trustworthy when
//! a proxy in front **overwrites** it (or appends to it): sent straight to this server, any
//! client could write any address there and dodge its caps. For `X-Forwarded-For` the
//! right-most entry is used: it is the one our proxy appended; entries to its left came
//! from the client and prove nothing.
//!
//! IPv6 addresses count by their /64 network: one host usually owns a whole /64 and could
//! otherwise take a fresh address for every socket.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, HeaderName};

/// Default WebSockets per address. At a conference every visitor on the venue Wi-Fi shares
/// one NAT address: 32 lets a full room keep the page open (a tab each) while one script
/// from one address still gets at most 32 of the 512 sockets.
pub const DEFAULT_SOCKETS_PER_CLIENT: usize = 32;
/// Default runs in flight per address. Runs are short (a default race is over in well under
/// a second), so two at a time serve a shared NAT fine, and a refusal is a retry away; with
/// the default 8 slots, no single address can hold more than a quarter of them.
pub const DEFAULT_RUNS_PER_CLIENT: usize = 2;

/// How much one address may hold at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientCaps {
    /// Open WebSockets.
    pub sockets: usize,
    /// Runs (or comparisons) in flight.
    pub runs: usize,
}

impl Default for ClientCaps {
    fn default() -> Self {
        ClientCaps {
            sockets: DEFAULT_SOCKETS_PER_CLIENT,
            runs: DEFAULT_RUNS_PER_CLIENT,
        }
    }
}

/// One client, as the caps count it: an IPv4 address, or an IPv6 /64 network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddr(IpAddr);

impl ClientAddr {
    /// The client that `ip` belongs to.
    pub fn new(ip: IpAddr) -> Self {
        let ip = match ip {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(Ipv6Addr::from(v6.to_bits() & !((1u128 << 64) - 1))),
            },
            v4 => v4,
        };
        ClientAddr(ip)
    }

    /// Who sent a request: the address in `header` when the operator named one and it holds
    /// a valid address, else the TCP peer. With neither (a test driving the router with
    /// `oneshot`), every request counts as one unknown client.
    pub fn of(headers: &HeaderMap, peer: Option<SocketAddr>, header: Option<&HeaderName>) -> Self {
        let from_header = header.and_then(|name| forwarded_ip(headers, name));
        let ip = from_header
            .or(peer.map(|p| p.ip()))
            .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
        ClientAddr::new(ip)
    }
}

impl std::fmt::Display for ClientAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V6(net) => write!(f, "{net}/64"),
            v4 => write!(f, "{v4}"),
        }
    }
}

/// The address in `name`: the right-most entry of a comma-separated list (what
/// `X-Forwarded-For` holds; `X-Real-IP` holds a single one). Uses the last header line when
/// the header is repeated, for the same reason.
fn forwarded_ip(headers: &HeaderMap, name: &HeaderName) -> Option<IpAddr> {
    let line = headers.get_all(name).iter().next_back()?.to_str().ok()?;
    let last = line.rsplit(',').next()?.trim();
    last.parse().ok()
}

/// What a session knows about its client, for admission.
pub struct Caller {
    /// The address its per-address caps count against.
    pub addr: ClientAddr,
    /// `scheme://host` the client reached us at (a room's join URL starts with it).
    pub base_url: String,
}

/// What an address holds right now.
#[derive(Debug, Default, Clone, Copy)]
struct Held {
    sockets: usize,
    runs: usize,
}

/// Which of an address's counts a [`ClientSlot`] holds one of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Socket,
    Run,
}

/// Per-address counts against [`ClientCaps`].
#[derive(Debug)]
pub struct Clients {
    caps: ClientCaps,
    ip_header: Option<HeaderName>,
    // A std Mutex, not tokio's: it is held for one HashMap update and never across an
    // `.await`, so there is nothing to wait for. Addresses holding nothing are removed, so
    // the map is as large as the set of clients connected right now.
    held: Mutex<HashMap<ClientAddr, Held>>,
}

/// A socket or run counted against one address; dropping it gives it back.
#[derive(Debug)]
pub struct ClientSlot {
    clients: Arc<Clients>,
    addr: ClientAddr,
    kind: Kind,
}

impl Clients {
    /// Count against `caps`; take client addresses from `ip_header` when set.
    pub fn new(caps: ClientCaps, ip_header: Option<HeaderName>) -> Self {
        Clients {
            caps,
            ip_header,
            held: Mutex::new(HashMap::new()),
        }
    }

    /// The caps in force.
    pub fn caps(&self) -> ClientCaps {
        self.caps
    }

    /// The header client addresses come from, if not the TCP peer.
    pub fn ip_header(&self) -> Option<&HeaderName> {
        self.ip_header.as_ref()
    }

    /// Count one more socket for `addr`, or refuse with the sentence for the 429 body.
    pub fn open_socket(self: &Arc<Self>, addr: ClientAddr) -> Result<ClientSlot, String> {
        self.take(addr, Kind::Socket).map_err(|cap| {
            format!(
                "this address ({addr}) already has {cap} WebSockets open, the most one address \
                 may have; close a tab, or try again shortly"
            )
        })
    }

    /// Count one more run for `addr`, or refuse with the sentence for the `busy` error.
    pub fn start_run(self: &Arc<Self>, addr: ClientAddr) -> Result<ClientSlot, String> {
        self.take(addr, Kind::Run).map_err(|cap| {
            format!(
                "this address already has {cap} {} in flight, the most one address may have; \
                 try again when one ends",
                if cap == 1 { "run" } else { "runs" }
            )
        })
    }

    /// Take one of `kind` for `addr`; on refusal, the cap that was hit.
    fn take(self: &Arc<Self>, addr: ClientAddr, kind: Kind) -> Result<ClientSlot, usize> {
        let mut held = self
            .held
            .lock()
            .expect("never poisoned: no panics under the lock");
        let entry = held.entry(addr).or_default();
        let (count, cap) = match kind {
            Kind::Socket => (&mut entry.sockets, self.caps.sockets),
            Kind::Run => (&mut entry.runs, self.caps.runs),
        };
        if *count >= cap {
            if entry.sockets == 0 && entry.runs == 0 {
                held.remove(&addr);
            }
            return Err(cap);
        }
        *count += 1;
        Ok(ClientSlot {
            clients: Arc::clone(self),
            addr,
            kind,
        })
    }

    /// Addresses holding anything right now (for `/healthz`).
    pub fn addresses(&self) -> usize {
        self.held.lock().expect("never poisoned").len()
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut held = self.clients.held.lock().expect("never poisoned");
        if let Some(entry) = held.get_mut(&self.addr) {
            match self.kind {
                Kind::Socket => entry.sockets -= 1,
                Kind::Run => entry.runs -= 1,
            }
            if entry.sockets == 0 && entry.runs == 0 {
                held.remove(&self.addr);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(name: &'static str, values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(name, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    const PEER: &str = "10.0.0.9:5555";

    fn of(h: &HeaderMap, header: Option<&'static str>) -> String {
        let name = header.map(HeaderName::from_static);
        ClientAddr::of(h, Some(PEER.parse().unwrap()), name.as_ref()).to_string()
    }

    #[test]
    fn the_peer_unless_the_operator_names_a_header() {
        let h = headers("x-forwarded-for", &["1.2.3.4"]);
        assert_eq!(
            of(&h, None),
            "10.0.0.9",
            "a header is ignored unless configured"
        );
        assert_eq!(of(&h, Some("x-forwarded-for")), "1.2.3.4");
    }

    #[test]
    fn x_forwarded_for_counts_the_right_most_entry() {
        // The client wrote "6.6.6.6"; our proxy appended the address it really saw.
        let h = headers("x-forwarded-for", &["6.6.6.6, 198.51.100.7"]);
        assert_eq!(of(&h, Some("x-forwarded-for")), "198.51.100.7");
        let h = headers("x-forwarded-for", &["6.6.6.6", "198.51.100.8"]);
        assert_eq!(of(&h, Some("x-forwarded-for")), "198.51.100.8");
        let h = headers("x-real-ip", &[" 203.0.113.5 "]);
        assert_eq!(of(&h, Some("x-real-ip")), "203.0.113.5");
    }

    #[test]
    fn a_missing_or_garbled_header_falls_back_to_the_peer() {
        assert_eq!(of(&HeaderMap::new(), Some("x-real-ip")), "10.0.0.9");
        let h = headers("x-real-ip", &["unknown"]);
        assert_eq!(of(&h, Some("x-real-ip")), "10.0.0.9");
    }

    #[test]
    fn ipv6_counts_by_its_64_and_mapped_ipv4_as_ipv4() {
        let a = ClientAddr::new("2001:db8:1:2::1".parse().unwrap());
        let b = ClientAddr::new("2001:db8:1:2:ffff::9".parse().unwrap());
        let c = ClientAddr::new("2001:db8:1:3::1".parse().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.to_string(), "2001:db8:1:2::/64");
        let mapped = ClientAddr::new("::ffff:192.0.2.1".parse().unwrap());
        assert_eq!(mapped.to_string(), "192.0.2.1");
    }

    #[test]
    fn caps_count_per_address_and_free_on_drop() {
        let clients = Arc::new(Clients::new(
            ClientCaps {
                sockets: 2,
                runs: 1,
            },
            None,
        ));
        let me = ClientAddr::new("192.0.2.1".parse().unwrap());
        let you = ClientAddr::new("192.0.2.2".parse().unwrap());
        let s1 = clients.open_socket(me).unwrap();
        let _s2 = clients.open_socket(me).unwrap();
        let refused = clients.open_socket(me).unwrap_err();
        assert!(
            refused.contains("already has 2 WebSockets open"),
            "{refused}"
        );
        let _yours = clients.open_socket(you).unwrap();
        let run = clients.start_run(me).unwrap();
        let refused = clients.start_run(me).unwrap_err();
        assert!(
            refused.starts_with("this address already has 1 run in flight"),
            "{refused}"
        );
        drop(run);
        drop(s1);
        assert!(clients.start_run(me).is_ok());
        assert!(clients.open_socket(me).is_ok());
        drop(_yours);
        assert_eq!(clients.addresses(), 1);
    }
}
