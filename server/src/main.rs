//! oversold server (wiring comes next).
fn main() {}
