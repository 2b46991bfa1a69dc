//! `include/memchan.h` is cbindgen's output for `src/native` (the C declarations
//! are never written by hand). A stale header fails here; regenerate it with
//! `MEMCHAN_BLESS=1 cargo test -p memchan-capi --test native_header`.

use std::path::Path;

const DIR: &str = env!("CARGO_MANIFEST_DIR");

fn generate() -> String {
    let dir = Path::new(DIR);
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut out = Vec::new();
    // The native API's files only: lib.rs's OpenSHMEM functions belong to shmem.h.
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/native/errors.rs"))
        .with_src(dir.join("src/native/api.rs"))
        .with_src(dir.join("src/native/msg.rs"))
        .generate()
        .expect("cbindgen parses src/native")
        .write(&mut out);
    String::from_utf8(out).expect("UTF-8 header")
}

#[test]
fn memchan_h_is_cbindgens_output() {
    let want = generate();
    let path = Path::new(DIR).join("include/memchan.h");
    if std::env::var_os("MEMCHAN_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write include/memchan.h");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "include/memchan.h is not cbindgen's output for src/native: regenerate it with \
         MEMCHAN_BLESS=1 cargo test -p memchan-capi --test native_header"
    );
}
