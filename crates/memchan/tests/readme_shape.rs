//! The README stays a guide and keeps the block the bench's report fills.
//!
//! The verdict block sits between two marker lines that a tool regenerates from the
//! bench's report (`docs/results/latest.md` and `latest.json`), so they must stay,
//! once each and in order. The README and ARCHITECTURE.md keep their sizes: a README of
//! at most about 300 lines that guides, and an architecture map of at most about 30 KB
//! (detail belongs in `docs/` and in each module's `//!` doc).

use std::path::Path;

fn doc(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

const BEGIN: &str = "<!-- verdicts:begin -->";
const END: &str = "<!-- verdicts:end -->";

#[test]
fn the_readme_keeps_one_verdict_block() {
    let readme = doc("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    let at = |marker: &str| {
        let found: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == marker).collect();
        assert_eq!(
            found.len(),
            1,
            "README.md needs the line {marker} exactly once"
        );
        found[0]
    };
    let (begin, end) = (at(BEGIN), at(END));
    assert!(begin < end, "{BEGIN} must come before {END}");
    let block = lines[begin + 1..end].join("\n");
    assert!(
        block.contains("docs/results/latest.md"),
        "the verdict block links the bench's report"
    );
}

#[test]
fn the_readme_and_the_map_stay_short() {
    let readme = doc("README.md").lines().count();
    assert!(
        readme <= 320,
        "README.md has {readme} lines: move detail to docs/"
    );
    let map = doc("ARCHITECTURE.md").len();
    assert!(
        map <= 32 * 1024,
        "ARCHITECTURE.md has {map} bytes: move detail to //! docs"
    );
}
