//! A small timing harness for the micro-benchmarks (`cargo bench`): each benchmark body runs in
//! batches sized to about 20 ms, 15 batches are timed, and the median, minimum and maximum time
//! per operation are printed. Benchmarks are not tests: nothing here asserts on speed.

use std::time::{Duration, Instant};

/// Time `body`, which performs `ops` operations per call, and print one line for `name`.
pub fn run(name: &str, ops: u64, mut body: impl FnMut()) {
    // Warm up and size a batch to about 20 ms.
    let mut calls = 1u64;
    loop {
        let t = Instant::now();
        for _ in 0..calls {
            body();
        }
        let e = t.elapsed();
        if e >= Duration::from_millis(20) {
            break;
        }
        calls = if e < Duration::from_micros(100) { calls * 16 } else { calls * 2 };
    }
    let mut per_op: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                body();
            }
            t.elapsed().as_nanos() as f64 / (calls * ops) as f64
        })
        .collect();
    per_op.sort_by(f64::total_cmp);
    println!(
        "{name:<56} {:>9.1} ns/op  ({:.1} .. {:.1}; 15 batches of {} ops)",
        per_op[per_op.len() / 2],
        per_op[0],
        per_op[per_op.len() - 1],
        calls * ops
    );
}
