//! The BPF sock_ops program that answers `BPF_SOCK_OPS_BASE_RTT`, as a small rule engine.
//!
//! Linux asks for a base RTT once per connection: `tcpnv_init` calls
//! `tcp_call_bpf(sk, BPF_SOCK_OPS_BASE_RTT, 0, NULL)` and uses the reply when it is positive
//! (commit 85cce21578 "bpf: Add BPF_SOCKET_OPS_BASE_RTT support to tcp_nv"). Whatever program
//! the cgroup has attached decides the reply from the connection's addresses and congestion
//! control. ccsim models that program as a [`BaseRttProvider`]: an ordered list of
//! [`BaseRttRule`]s evaluated by [`base_rtt_for`]. The scenario layer evaluates it when it
//! builds a connection and stores the reply in the connection's configuration, from which the
//! endpoint fills [`Sock::base_rtt_us`](crate::Sock::base_rtt_us).
//!
//! The kernel's example program, `samples/bpf/tcp_basertt_kern.c`, replies 80 (µs) when
//! - the connection is IPv6 and both hosts share the first 44 bits of their addresses (the
//!   first 32-bit word equal and the top 12 bits of the second: "the 1st 5.5 bytes"), meaning
//!   "both hosts are in the same datacenter", and
//! - the socket's `TCP_CONGESTION` is `"nv"`;
//!
//! and -1 otherwise (any other op, any other CC, other addresses), which NV ignores. ccsim's
//! addresses are 32-bit, so the "same prefix as the local address" test becomes a rule whose
//! destination prefix is the sending host's own prefix: [`BaseRttRule::tcp_basertt_kern`] builds
//! that rule for one host.

use crate::CcKind;

/// What `samples/bpf/tcp_basertt_kern.c` replies for a same-datacenter NV connection (µs).
pub const TCP_BASERTT_KERN_US: u32 = 80;

/// One rule of the base-RTT program: connections to a destination inside `dst_prefix`, using
/// `cc` (`None`: any algorithm), get `base_rtt_us`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseRttRule {
    /// (address, prefix length 0..=32): the rule applies when the first `len` bits of the
    /// destination equal those of `address`. Length 0 matches every destination.
    pub dst_prefix: (u32, u8),
    /// Only connections using this algorithm (`bpf_getsockopt(TCP_CONGESTION)`); `None`: any.
    pub cc: Option<CcKind>,
    /// The reply, in µs. NV only uses positive replies (`if (base_rtt > 0)`), so a rule with 0
    /// ends the search with "no base RTT" (like the sample's -1).
    pub base_rtt_us: u32,
}

impl BaseRttRule {
    /// The rule `tcp_basertt_kern.c` applies for a host at `local_ipv4`: destinations that share
    /// its first `prefix_len` bits (the sample uses 44 bits of an IPv6 address) and run NV get
    /// 80 µs.
    pub fn tcp_basertt_kern(local_ipv4: u32, prefix_len: u8) -> BaseRttRule {
        BaseRttRule {
            dst_prefix: (local_ipv4 & prefix_mask(prefix_len), prefix_len),
            cc: Some(CcKind::Nv),
            base_rtt_us: TCP_BASERTT_KERN_US,
        }
    }

    /// Reject prefixes longer than 32 bits and replies the kernel's `int` reply cannot carry.
    pub fn validate(&self) -> Result<(), String> {
        if self.dst_prefix.1 > 32 {
            return Err(format!("base RTT rule prefix length {} must be 0..=32", self.dst_prefix.1));
        }
        if self.base_rtt_us > i32::MAX as u32 {
            return Err(format!("base RTT {} µs does not fit the BPF reply (int)", self.base_rtt_us));
        }
        Ok(())
    }

    /// The rule applies to a connection to `dst_ipv4` using `cc`.
    pub fn matches(&self, dst_ipv4: u32, cc: CcKind) -> bool {
        let (addr, len) = self.dst_prefix;
        let mask = prefix_mask(len);
        dst_ipv4 & mask == addr & mask && self.cc.is_none_or(|c| c == cc)
    }
}

/// Netmask of a prefix length (lengths above 32 count as 32).
fn prefix_mask(len: u8) -> u32 {
    match len {
        0 => 0,
        l => u32::MAX << (32 - u32::from(l.min(32))),
    }
}

/// The reply of the base-RTT program for a connection to `dst_ipv4` using `cc`: the first rule
/// that matches decides; `None` when none does (no program reply, as with no program attached).
pub fn base_rtt_for(rules: &[BaseRttRule], dst_ipv4: u32, cc: CcKind) -> Option<u32> {
    rules.iter().find(|r| r.matches(dst_ipv4, cc)).map(|r| r.base_rtt_us)
}

/// The sock_ops program attached to a host's cgroup, as far as `BPF_SOCK_OPS_BASE_RTT` goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BaseRttProvider {
    /// Evaluated in order; the first match wins.
    pub rules: Vec<BaseRttRule>,
}

impl BaseRttProvider {
    /// `tcp_call_bpf(sk, BPF_SOCK_OPS_BASE_RTT, 0, NULL)` for a connection to `dst_ipv4` using
    /// `cc`; what the scenario layer stores for the connection.
    pub fn base_rtt_us(&self, dst_ipv4: u32, cc: CcKind) -> Option<u32> {
        base_rtt_for(&self.rules, dst_ipv4, cc)
    }

    pub fn validate(&self) -> Result<(), String> {
        self.rules.iter().try_for_each(BaseRttRule::validate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn ip(a: u8, b: u8, c: u8, d: u8) -> u32 {
        u32::from_be_bytes([a, b, c, d])
    }

    #[test]
    fn tcp_basertt_kern_rule_answers_80us_for_nv_in_the_same_prefix_only() {
        // A host at 10.1.2.3 with a /16 "datacenter" prefix.
        let rules = [BaseRttRule::tcp_basertt_kern(ip(10, 1, 2, 3), 16)];
        assert_eq!(rules[0].dst_prefix, (ip(10, 1, 0, 0), 16));
        assert_eq!(base_rtt_for(&rules, ip(10, 1, 200, 7), CcKind::Nv), Some(80));
        assert_eq!(base_rtt_for(&rules, ip(10, 1, 2, 3), CcKind::Nv), Some(80));
        // Another datacenter: 10.2/16 differs in the 15th bit.
        assert_eq!(base_rtt_for(&rules, ip(10, 2, 2, 3), CcKind::Nv), None);
        assert_eq!(base_rtt_for(&rules, ip(11, 1, 2, 3), CcKind::Nv), None);
        // Same datacenter, other CCs: the sample replies -1 (no base RTT).
        for cc in CcKind::ALL.into_iter().filter(|&c| c != CcKind::Nv) {
            assert_eq!(base_rtt_for(&rules, ip(10, 1, 200, 7), cc), None, "{cc:?}");
        }
        // The sample's 44-bit IPv6 test, with ccsim's 32-bit addresses at /12: 0xfff00000 of the
        // second word is the same test on the top 12 bits.
        let rules = [BaseRttRule::tcp_basertt_kern(0x0a0f_ffff, 12)];
        assert_eq!(base_rtt_for(&rules, 0x0a00_0000, CcKind::Nv), Some(80));
        assert_eq!(base_rtt_for(&rules, 0x0a10_0000, CcKind::Nv), None);
    }

    #[test]
    fn first_matching_rule_wins() {
        let rules = [
            // A deny rule for one rack: matched first, the reply 0 means "no base RTT".
            BaseRttRule { dst_prefix: (ip(10, 1, 9, 0), 24), cc: None, base_rtt_us: 0 },
            BaseRttRule { dst_prefix: (ip(10, 1, 0, 0), 16), cc: Some(CcKind::Nv), base_rtt_us: 80 },
            // Not NV: the NV rule is skipped, this one applies.
            BaseRttRule { dst_prefix: (ip(10, 1, 0, 0), 16), cc: None, base_rtt_us: 120 },
            BaseRttRule { dst_prefix: (0, 0), cc: None, base_rtt_us: 1000 },
        ];
        assert_eq!(base_rtt_for(&rules, ip(10, 1, 9, 44), CcKind::Nv), Some(0));
        assert_eq!(base_rtt_for(&rules, ip(10, 1, 8, 44), CcKind::Nv), Some(80));
        assert_eq!(base_rtt_for(&rules, ip(10, 1, 8, 44), CcKind::Cubic), Some(120));
        // /0 matches everything else.
        assert_eq!(base_rtt_for(&rules, ip(192, 168, 0, 1), CcKind::Reno), Some(1000));
        assert_eq!(base_rtt_for(&rules[..3], ip(192, 168, 0, 1), CcKind::Reno), None);
        assert_eq!(base_rtt_for(&[], ip(10, 1, 8, 44), CcKind::Nv), None);
        let p = BaseRttProvider { rules: rules.to_vec() };
        assert_eq!(p.base_rtt_us(ip(10, 1, 8, 44), CcKind::Nv), Some(80));
        assert!(p.validate().is_ok());
    }

    #[test]
    fn prefix_lengths_and_host_bits() {
        // /32 is one address; host bits of the rule's address are ignored.
        let r = BaseRttRule { dst_prefix: (ip(10, 0, 0, 5), 32), cc: None, base_rtt_us: 1 };
        assert!(r.matches(ip(10, 0, 0, 5), CcKind::Cubic));
        assert!(!r.matches(ip(10, 0, 0, 4), CcKind::Cubic));
        let r = BaseRttRule { dst_prefix: (ip(10, 0, 0, 5), 1), cc: None, base_rtt_us: 1 };
        assert!(r.matches(ip(127, 255, 255, 255), CcKind::Cubic));
        assert!(!r.matches(ip(128, 0, 0, 0), CcKind::Cubic));
        assert!(BaseRttRule { dst_prefix: (0, 33), cc: None, base_rtt_us: 1 }.validate().is_err());
        assert!(BaseRttRule { dst_prefix: (0, 32), cc: None, base_rtt_us: 1 << 31 }.validate().is_err());
        assert!(BaseRttRule { dst_prefix: (0, 32), cc: None, base_rtt_us: i32::MAX as u32 }.validate().is_ok());
    }
}
