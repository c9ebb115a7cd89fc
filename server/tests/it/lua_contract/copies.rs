//! The helpers every script carries a copy of (`canonical_integer`, `stored`) are the same,
//! byte for byte, in every file under `lua/`.
//!
//! They are copies on purpose: a student reads one script top to bottom, and Redis runs one
//! script with nothing shared. So nothing keeps them in step but this test: a fix made in
//! one copy (say, to what `canonical_integer` accepts) and not in the others would make the
//! scripts disagree about what a number is.

use std::collections::BTreeMap;

/// The scripts' folder, next to the server's.
pub const LUA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../lua");

/// The helpers known to be copied; the test also checks any other name found in two files.
const COPIED: [&str; 2] = ["canonical_integer", "stored"];

/// Every top-level `local function NAME(...)` of a script, by name: its text from that line
/// to the first `end` at the start of a line.
fn helpers(source: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.strip_prefix("local function ") else {
            continue;
        };
        let name = rest.split('(').next().unwrap_or(rest).trim().to_string();
        let mut text = vec![line];
        for body in lines.by_ref() {
            text.push(body);
            if body == "end" {
                break;
            }
        }
        found.push((name, text.join("\n")));
    }
    found
}

/// Every copy of every helper, by name, each with the file it is in.
fn copies_by_name() -> BTreeMap<String, Vec<(String, String)>> {
    let mut files: Vec<_> = std::fs::read_dir(LUA_DIR)
        .expect("the lua/ folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "lua"))
        .collect();
    files.sort();
    let mut by_name: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let source = std::fs::read_to_string(&path).unwrap();
        for (name, text) in helpers(&source) {
            by_name.entry(name).or_default().push((file.clone(), text));
        }
    }
    by_name
}

/// How the copies of one helper disagree: each file whose copy is not the one most files
/// have, with its first differing line. Empty when every copy is the same.
fn disagreements(name: &str, copies: &[(String, String)]) -> Vec<String> {
    let mut versions: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (file, text) in copies {
        versions.entry(text).or_default().push(file);
    }
    let (usual, usual_files) = versions
        .iter()
        .max_by_key(|(_, files)| files.len())
        .map(|(text, files)| (*text, files.clone()))
        .expect("at least one copy");
    let mut out = Vec::new();
    for (text, files) in &versions {
        if *text == usual {
            continue;
        }
        let (mut a, mut b) = (text.lines(), usual.lines());
        let mut n = 1;
        let how = loop {
            match (a.next(), b.next()) {
                (Some(x), Some(y)) if x == y => n += 1,
                (x, y) => {
                    break format!(
                        "line {n} of the function is {x:?} here, {y:?} in {}",
                        usual_files.join(", ")
                    );
                }
            }
        };
        for file in files {
            out.push(format!("lua/{file}: its copy of {name} differs: {how}"));
        }
    }
    out
}

#[test]
fn every_copy_of_a_shared_lua_helper_is_the_same() {
    let by_name = copies_by_name();
    for name in COPIED {
        let n = by_name.get(name).map_or(0, Vec::len);
        assert!(
            n >= 2,
            "{name}: found {n} copies under lua/; the extraction no longer finds them"
        );
    }
    let mut bad = Vec::new();
    for (name, copies) in by_name.iter().filter(|(_, c)| c.len() > 1) {
        bad.extend(disagreements(name, copies));
        println!("{name}: {} copies", copies.len());
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[test]
fn a_copy_that_differs_is_named_with_its_first_different_line() {
    // The checker can fail: one copy of three with a changed bound.
    let same = "local function f(s)\n  return #s > 15\nend";
    let changed = "local function f(s)\n  return #s > 16\nend";
    let copies = [
        ("a.lua".to_string(), same.to_string()),
        ("b.lua".to_string(), changed.to_string()),
        ("c.lua".to_string(), same.to_string()),
    ];
    assert_eq!(
        disagreements("f", &copies),
        [
            "lua/b.lua: its copy of f differs: line 2 of the function is Some(\"  return #s > 16\") \
             here, Some(\"  return #s > 15\") in a.lua, c.lua"
        ]
    );
    assert!(disagreements("f", &copies[..1]).is_empty());
    // The extraction stops at the function's own `end`, not at an inner one.
    let script = "local x = 1\nlocal function g(a)\n  if a then\n    return 1\n  end\n  return 0\nend\nreturn g(x)\n";
    assert_eq!(
        helpers(script),
        [(
            "g".to_string(),
            "local function g(a)\n  if a then\n    return 1\n  end\n  return 0\nend".to_string()
        )]
    );
}
