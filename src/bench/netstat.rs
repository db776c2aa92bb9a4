//! The kernel's TCP counters that show connections stalled before a server
//! saw them: a listen queue that overflowed drops the handshake, and the
//! client's SYN is resent after a second. Read from `/proc/net/netstat`
//! before and after a run (the whole machine's, so the mock's listener and
//! the orchestrator's connects both count).

use std::collections::BTreeMap;

use serde::Serialize;

/// The counters a run moved, and by how much.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TcpStalls {
    /// Times a listen queue was full when a handshake completed.
    pub listen_overflows: u64,
    /// Handshakes dropped at a listening socket, for any reason.
    pub listen_drops: u64,
    /// SYNs resent by clients (each one about a second of waiting).
    pub syn_retransmits: u64,
}

impl TcpStalls {
    /// The counters now; `None` where `/proc/net/netstat` cannot be read.
    pub fn now() -> Option<TcpStalls> {
        let text = std::fs::read_to_string("/proc/net/netstat").ok()?;
        Some(TcpStalls::from_counters(&parse(&text)))
    }

    fn from_counters(c: &BTreeMap<String, u64>) -> TcpStalls {
        let get = |name: &str| c.get(name).copied().unwrap_or(0);
        TcpStalls {
            listen_overflows: get("TcpExt:ListenOverflows"),
            listen_drops: get("TcpExt:ListenDrops"),
            syn_retransmits: get("TcpExt:TCPSynRetrans"),
        }
    }

    /// What moved from `before` to `self`.
    pub fn since(self, before: TcpStalls) -> TcpStalls {
        TcpStalls {
            listen_overflows: self
                .listen_overflows
                .saturating_sub(before.listen_overflows),
            listen_drops: self.listen_drops.saturating_sub(before.listen_drops),
            syn_retransmits: self.syn_retransmits.saturating_sub(before.syn_retransmits),
        }
    }
}

/// `/proc/net/netstat` is pairs of lines, `Group: Name1 Name2 …` then
/// `Group: 1 2 …`; each counter becomes `Group:Name`. Lines that do not pair
/// up, and values that are not numbers, are left out.
fn parse(text: &str) -> BTreeMap<String, u64> {
    let mut counters = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.chunks(2) {
        let [names, values] = pair else { continue };
        let (Some((group, names)), Some((same, values))) =
            (names.split_once(':'), values.split_once(':'))
        else {
            continue;
        };
        if group != same {
            continue;
        }
        for (name, value) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(value) = value.parse() {
                counters.insert(format!("{group}:{name}"), value);
            }
        }
    }
    counters
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_stall_counters_are_read_from_their_group() {
        let text = "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPSynRetrans\n\
                    TcpExt: 0 7 9 12\n\
                    IpExt: InNoRoutes ListenDrops\n\
                    IpExt: 1 500\n";
        let stalls = TcpStalls::from_counters(&parse(text));
        assert_eq!(
            stalls,
            TcpStalls {
                listen_overflows: 7,
                listen_drops: 9,
                syn_retransmits: 12
            }
        );
        let later = TcpStalls {
            listen_overflows: 10,
            ..stalls
        };
        assert_eq!(later.since(stalls).listen_overflows, 3);
        assert_eq!(stalls.since(later).listen_overflows, 0);
    }

    proptest! {
        #[test]
        fn any_counters_written_in_the_kernels_layout_read_back(
            groups in proptest::collection::btree_map(
                "[A-Z][a-zA-Z]{1,8}",
                proptest::collection::btree_map("[A-Z][a-zA-Z0-9]{1,12}", any::<u64>(), 1..20),
                1..5,
            )
        ) {
            let mut text = String::new();
            let mut expected = BTreeMap::new();
            for (group, counters) in &groups {
                let names: Vec<&str> = counters.keys().map(String::as_str).collect();
                let values: Vec<String> = counters.values().map(u64::to_string).collect();
                text.push_str(&format!("{group}: {}\n{group}: {}\n", names.join(" "), values.join(" ")));
                for (name, value) in counters {
                    expected.insert(format!("{group}:{name}"), *value);
                }
            }
            prop_assert_eq!(parse(&text), expected);
        }

        #[test]
        fn any_text_parses_without_panicking(text in "\\PC{0,400}") {
            let _ = parse(&text);
        }
    }
}
