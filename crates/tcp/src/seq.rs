//! Sequence numbers (`u32 seq` in the kernel, compared with `before()` / `after()` of
//! include/net/tcp.h).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A TCP sequence number: 32 bits that wrap. It has no `Ord` — numbers compare only relative to
/// each other within 2^31, as the kernel's `before()` / `after()` compare them (by the sign of
/// the s32 difference: [`ccsim_cc::before`]); adding a length and taking a distance wrap.
/// Transparent over `u32`: no cost over the bare number.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SeqNum(pub u32);

impl SeqNum {
    /// The number as it goes on the wire.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }
    /// `before(self, o)`: self precedes o.
    #[inline]
    pub fn before(self, o: SeqNum) -> bool {
        ccsim_cc::before(self.0, o.0)
    }
    /// `after(self, o)`: self follows o.
    #[inline]
    pub fn after(self, o: SeqNum) -> bool {
        ccsim_cc::after(self.0, o.0)
    }
    /// The later of the two (`after(a, b) ? a : b`).
    #[inline]
    pub fn max_seq(self, o: SeqNum) -> SeqNum {
        if self.after(o) {
            self
        } else {
            o
        }
    }
}

/// `seq + len`, wrapping.
impl Add<u32> for SeqNum {
    type Output = SeqNum;
    #[inline]
    fn add(self, len: u32) -> SeqNum {
        SeqNum(self.0.wrapping_add(len))
    }
}

impl AddAssign<u32> for SeqNum {
    #[inline]
    fn add_assign(&mut self, len: u32) {
        self.0 = self.0.wrapping_add(len);
    }
}

/// `seq - len`, wrapping.
impl Sub<u32> for SeqNum {
    type Output = SeqNum;
    #[inline]
    fn sub(self, len: u32) -> SeqNum {
        SeqNum(self.0.wrapping_sub(len))
    }
}

/// `end - start`: the bytes from `start` to `end`, wrapping.
impl Sub<SeqNum> for SeqNum {
    type Output = u32;
    #[inline]
    fn sub(self, start: SeqNum) -> u32 {
        self.0.wrapping_sub(start.0)
    }
}

impl From<u32> for SeqNum {
    #[inline]
    fn from(v: u32) -> SeqNum {
        SeqNum(v)
    }
}

impl From<SeqNum> for u32 {
    #[inline]
    fn from(s: SeqNum) -> u32 {
        s.0
    }
}

/// Printed as the bare number.
impl fmt::Debug for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn wraps() {
        let (a, b) = (SeqNum(u32::MAX - 5), SeqNum(3));
        assert!(a.before(b) && b.after(a));
        assert!(!b.before(b) && !b.after(b));
        assert_eq!(a + 9, b);
        assert_eq!(b - a, 9);
        assert_eq!(b - 9, a);
        assert_eq!(a.max_seq(b), b);
        assert_eq!(format!("{:?} {}", Some(b), a), "Some(3) 4294967290");
    }
}
