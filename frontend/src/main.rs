//! The oversold page (placeholder until the page lands).
fn main() {}
