//! Entry point of the wasm app: shows panics on the page, then mounts it; nothing else.

fn main() {
    // First, so that a panic while mounting is shown too.
    oversold_frontend::panic_hook::install();
    leptos::mount::mount_to_body(oversold_frontend::app::App);
}
