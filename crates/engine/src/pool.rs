/// Index of an object in a [`Pool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PoolId(pub u32);

/// A slab of reusable objects: after warm-up, allocating a packet is popping a free index.
pub struct Pool<T> {
    items: Vec<T>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool { items: Vec::new(), free: Vec::new(), live: 0 }
    }
}

impl<T> Pool<T> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn alloc(&mut self, v: T) -> PoolId {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = v;
            PoolId(i)
        } else {
            self.items.push(v);
            PoolId(self.items.len() as u32 - 1)
        }
    }
    /// Return a slot to the pool. The value stays in place until reused.
    pub fn free(&mut self, id: PoolId) {
        self.live -= 1;
        self.free.push(id.0);
    }
    pub fn get(&self, id: PoolId) -> &T {
        &self.items[id.0 as usize]
    }
    pub fn get_mut(&mut self, id: PoolId) -> &mut T {
        &mut self.items[id.0 as usize]
    }
    /// Objects currently allocated.
    pub fn live(&self) -> usize {
        self.live
    }
    /// Slots ever created (the pool's high-water mark).
    pub fn capacity(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn slots_are_reused() {
        let mut p = Pool::new();
        let a = p.alloc(1);
        let _b = p.alloc(2);
        p.free(a);
        let c = p.alloc(3);
        assert_eq!(a, c);
        assert_eq!(*p.get(c), 3);
        assert_eq!(p.capacity(), 2);
        assert_eq!(p.live(), 2);
    }
}
