//! The layout stays findable: every path `docs/architecture.md` names exists, and no file of
//! `src/` outgrows 600 lines of non-test code (a file that does is split by concern into
//! child modules, so a rule's room is found from file names).

use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The most lines of non-test code a source file may have: the lines before its first
/// `#[cfg(test)]` line (the unit tests live at the end of a file).
const MAX_CODE_LINES: usize = 600;

/// Files the limit does not hold for yet (none now): a file that grows past it is split by
/// concern, or listed here with its count and why; the test fails while an entry is no
/// longer needed.
const NOT_SPLIT_YET: &[&str] = &[];

/// Whether a backticked span names a repo-relative path: no spaces, a `/` inside, and a
/// source or document extension, or a trailing `/` for a folder.
fn is_path(span: &str) -> bool {
    const EXTENSIONS: &[&str] = &[".rs", ".ts", ".tsx", ".js", ".mjs", ".md", ".sh"];
    !span.is_empty()
        && !span.contains(char::is_whitespace)
        && !span.starts_with('/')
        && span.contains('/')
        && (span.ends_with('/') || EXTENSIONS.iter().any(|e| span.ends_with(e)))
}

/// Every backticked span of a Markdown text, in order.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

#[test]
fn every_path_in_the_architecture_map_exists() {
    let map = Path::new(ROOT).join("docs/architecture.md");
    let text = fs::read_to_string(&map).expect("docs/architecture.md is readable");
    let paths: Vec<&str> = backticked(&text)
        .into_iter()
        .filter(|s| is_path(s))
        .collect();
    assert!(
        paths.len() > 50,
        "the map names only {} paths: is it the rule table?",
        paths.len()
    );
    let missing: Vec<&str> = paths
        .into_iter()
        .filter(|p| {
            let on_disk = Path::new(ROOT).join(p);
            if p.ends_with('/') {
                !on_disk.is_dir()
            } else {
                !on_disk.is_file()
            }
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn the_path_filter_takes_paths_only() {
    assert!(is_path("src/store/mod.rs"));
    assert!(is_path("src/codec/"));
    assert!(is_path("pkg-template/replay/index.js"));
    assert!(!is_path("/state"));
    assert!(!is_path("GET …/messages"));
    assert!(!is_path("mod.rs"));
    assert!(!is_path("handle_*"));
    assert_eq!(backticked("a `b` c `d/e.rs` f"), ["b", "d/e.rs"]);
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn code_lines(text: &str) -> usize {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .count()
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("src"), &mut files);
    files.sort();
    assert!(
        files.len() > 50,
        "found only {} files under src/",
        files.len()
    );
    let mut over = Vec::new();
    let mut no_longer_needed = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(ROOT)
            .expect("under the crate")
            .to_string_lossy()
            .replace('\\', "/");
        let n = code_lines(&fs::read_to_string(file).expect("a source file is readable"));
        let allowed = NOT_SPLIT_YET.contains(&rel.as_str());
        if n > MAX_CODE_LINES && !allowed {
            over.push(format!("{rel} ({n} lines)"));
        }
        if allowed && n <= MAX_CODE_LINES {
            no_longer_needed.push(rel);
        }
    }
    for entry in NOT_SPLIT_YET {
        if !Path::new(ROOT).join(entry).is_file() {
            no_longer_needed.push(entry.to_string());
        }
    }
    assert!(
        over.is_empty(),
        "over {MAX_CODE_LINES} lines of non-test code (split by concern): {over:?}"
    );
    assert!(
        no_longer_needed.is_empty(),
        "remove from NOT_SPLIT_YET (split or gone): {no_longer_needed:?}"
    );
}

#[test]
fn the_line_count_stops_at_the_tests() {
    assert_eq!(code_lines("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert_eq!(code_lines("a\n    #[cfg(test)]\nb\n"), 3);
    assert_eq!(code_lines("a\nb\n"), 2);
}
