// Two hot functions with a known split of the work (70/30 loop iterations of the same body),
// called from main: the Rust workload of tests/record/test_rust.sh.
use std::ptr::{read_volatile, write_volatile};
use std::time::{Duration, Instant};

#[inline(never)]
fn hot_rust_alpha(n: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..n {
        unsafe { write_volatile(&mut x, read_volatile(&x).wrapping_mul(31).wrapping_add(i)) }
    }
    x
}

#[inline(never)]
fn hot_rust_beta(n: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..n {
        unsafe { write_volatile(&mut x, read_volatile(&x).wrapping_mul(17).wrapping_add(i)) }
    }
    x
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut sum = 0u64;
    while Instant::now() < end {
        sum = sum.wrapping_add(hot_rust_alpha(70_000));
        sum = sum.wrapping_add(hot_rust_beta(30_000));
    }
    println!("{}", sum);
}
