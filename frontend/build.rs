//! The lab's wasm is split into lazily loaded chunks after linking (scripts/split-lab.sh), which
//! needs the linker to keep its relocations: `--emit-relocs`, for the lab's binary only and
//! only when it is built to be split (the `split` feature).

fn main() {
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_SPLIT");
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32");
    if wasm && std::env::var_os("CARGO_FEATURE_SPLIT").is_some() {
        println!("cargo:rustc-link-arg-bin=oversold-frontend=--emit-relocs");
    }
}
