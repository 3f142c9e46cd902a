//! ccsim's event core. Nothing here knows about TCP or networks: time is an integer number of
//! nanoseconds, events are ordered by `(time, insertion sequence)` so that every run with the same
//! inputs is identical, randomness comes from seeded generators, and objects that are created and
//! destroyed at packet rate live in a pool instead of on the heap.

pub mod microbench;
mod pool;
mod queue;
mod rng;
mod time;
mod wheel;

pub use pool::{Pool, PoolId};
pub use queue::{EventQueue, HeapQueue};
pub use rng::Rng;
pub use time::{ByteTime, SimTime};
pub use wheel::WheelQueue;
