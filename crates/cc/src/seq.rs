//! Wrap-around comparison of 32-bit counters: `before()` and `after()` of include/net/tcp.h
//! (FreeBSD's `SEQ_LT` / `SEQ_GT`), by the sign of the s32 difference. Modules use them for
//! sequence numbers, delivered counts and jiffies; the TCP endpoint's `SeqNum` compares with
//! them too. The one definition in ccsim.

/// `before(seq1, seq2)`: `a` precedes `b` modulo 2^32.
#[inline]
pub fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `after(seq2, seq1)`: `a` follows `b` modulo 2^32.
#[inline]
pub fn after(a: u32, b: u32) -> bool {
    before(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn wraps() {
        assert!(before(u32::MAX - 5, 3));
        assert!(after(3, u32::MAX - 5));
        assert!(!before(7, 7) && !after(7, 7));
        // The s32 difference decides: 2^31 apart, each is "before" the other's opposite.
        assert!(before(0, 1 << 31) && after(1 << 31, 0) == before(0, 1 << 31));
    }
}
