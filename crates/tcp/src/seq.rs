//! 32-bit sequence-number arithmetic (`before()` / `after()` in include/net/tcp.h).

/// `before(a, b)`: a precedes b modulo 2^32.
#[inline]
pub fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `after(a, b)`.
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
        assert!(!before(7, 7));
    }
}
