//! Entry point of the wasm app: mounts the page and does nothing else.

fn main() {
    leptos::mount::mount_to_body(oversold_frontend::app::App);
}
