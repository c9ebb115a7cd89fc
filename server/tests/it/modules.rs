//! The code map's rules, read from the code: no cycle between the server's top-level modules,
//! every "must not depend on" line of ARCHITECTURE.md, the protocol crate's dependencies, the
//! page model's independence from the DOM, and which modules speak Redis and SQL.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace root (this crate is `server/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// A file's code without its comments (doc links name modules without depending on them).
fn code_of(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The server's top-level modules and, for each, the others its code names as `crate::X`.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("server/src");
    let files = rust_files(&src);
    let top = |path: &Path| -> Option<String> {
        let rel = path.strip_prefix(&src).ok()?;
        let first = rel.components().next()?.as_os_str().to_str()?;
        let name = first.strip_suffix(".rs").unwrap_or(first).to_string();
        (name != "main" && name != "lib").then_some(name)
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top(f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for file in &files {
        let Some(from) = top(file) else { continue };
        let code = code_of(file);
        for named in names_after_crate(&code) {
            if named != from && modules.contains(&named) {
                graph.get_mut(&from).unwrap().insert(named);
            }
        }
    }
    graph
}

/// `X` for every `crate::X`, and each name inside `use crate::{X, Y::z}`.
fn names_after_crate(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            // Top-level names only: the first segment of each comma-separated path.
            let mut depth = 0;
            let mut start = true;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && (c.is_alphanumeric() || c == '_') => {
                        names.push(ident(&inner[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(ident(rest));
        }
    }
    names
}

/// One cycle in `graph`, if there is any (a path that comes back to its start).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_string(), Mark::Open);
        path.push(node.to_string());
        for next in &graph[node] {
            match marks[next] {
                Mark::Open => {
                    let from = path.iter().position(|n| n == next).unwrap();
                    let mut cycle = path[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(cycle) = visit(next, graph, marks, path) {
                        return Some(cycle);
                    }
                }
                Mark::Done => {}
            }
        }
        path.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks: BTreeMap<String, Mark> = graph.keys().map(|k| (k.clone(), Mark::New)).collect();
    for node in graph.keys() {
        if marks[node] == Mark::New
            && let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn the_servers_modules_have_no_cycle() {
    let graph = module_graph();
    assert!(
        graph.len() > 20,
        "the graph reads the whole crate: {graph:?}"
    );
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "modules depend on each other in a cycle: {}",
            cycle.join(" -> ")
        );
    }
}

/// The cycle finder can fail: a graph with a back edge has a cycle.
#[test]
fn a_back_edge_is_a_cycle() {
    let mut graph = module_graph();
    graph.get_mut("store").unwrap().insert("ws".into());
    let cycle = find_cycle(&graph).expect("store -> ws -> ... -> store");
    assert!(cycle.contains(&"store".to_string()), "{cycle:?}");
}

/// Every "- `A` must not depend on `B`, `C` or `D`." line of ARCHITECTURE.md holds.
#[test]
fn every_must_not_depend_rule_in_architecture_md_holds() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let graph = module_graph();
    let mut rules = 0;
    for line in doc.lines().filter(|l| l.contains("must not depend on")) {
        let ticks: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
        let (from, forbidden) = ticks.split_first().expect("a rule names its module");
        let reached = reachable(&graph, from);
        for to in forbidden {
            assert!(
                graph.contains_key(*to),
                "ARCHITECTURE.md names no module `{to}`"
            );
            assert!(
                !reached.contains(*to),
                "`{from}` depends on `{to}` (directly or through another module), which \
                 ARCHITECTURE.md forbids: {line}"
            );
            rules += 1;
        }
    }
    assert!(rules >= 20, "the rules were read: {rules}");
}

/// Modules `from` reaches, directly or not.
fn reachable(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(node) = todo.pop() {
        for next in &graph[&node] {
            if seen.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn the_protocol_crate_knows_no_runtime_store_or_ui() {
    let manifest = std::fs::read_to_string(root().join("protocol/Cargo.toml")).unwrap();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap();
    for banned in [
        "tokio",
        "axum",
        "redis",
        "leptos",
        "web-sys",
        "wasm-bindgen",
    ] {
        assert!(
            !deps.lines().any(|l| l.trim_start().starts_with(banned)),
            "protocol depends on {banned}"
        );
    }
}

#[test]
fn the_page_model_knows_no_dom() {
    for file in rust_files(&root().join("frontend/src/model")) {
        let code = code_of(&file);
        for banned in ["leptos", "web_sys", "wasm_bindgen", "js_sys", "gloo"] {
            assert!(
                !code.contains(banned),
                "{} uses {banned}: the model is plain Rust",
                file.display()
            );
        }
    }
}

/// Only `store/` sends Redis commands (and `private_cluster`, which forms a cluster with the
/// plain `CLUSTER` commands a student would type); only `pg.rs` speaks SQL.
#[test]
fn only_the_store_speaks_redis_and_only_pg_speaks_sql() {
    let src = root().join("server/src");
    for file in rust_files(&src) {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let code = code_of(&file);
        let redis = ["redis::cmd(", "redis::pipe(", "redis::Script"];
        if !rel.starts_with("store/") && rel != "private_cluster.rs" {
            for word in redis {
                assert!(!code.contains(word), "{rel} sends Redis commands ({word})");
            }
        }
        if rel != "pg.rs" {
            assert!(!code.contains("tokio_postgres"), "{rel} speaks SQL");
        }
    }
}
