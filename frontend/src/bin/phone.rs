//! Entry point of the phone page's wasm: shows panics on the page, then mounts it.

fn main() {
    oversold_frontend::panic_hook::install();
    leptos::mount::mount_to_body(oversold_frontend::phone_app::PhoneApp);
}
