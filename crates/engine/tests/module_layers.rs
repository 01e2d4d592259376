//! The scenario contract (`src/config/`) sits below the models: it may use the crate's units
//! and error types and its own modules, never the simulator, the network, energy, TCP, capture,
//! metrics or result code, nor the build step (`plan`) that joins them to it
//! (docs/architecture.md "Layers"). This test reads the source and names every path that breaks
//! the rule.

use std::path::Path;

/// Top-level modules the contract must not reach.
const BELOW_CONFIG_ONLY: [&str; 11] = ["sim", "net", "energy", "tcp", "capture", "metrics", "result", "app", "plan", "budget", "profiles"];

/// Paths allowed although their module is listed above, each with why. Each must lead to a
/// leaf file (`leaf_violations`): one that uses nothing of the crate but units, errors and
/// config's serde helpers, so no two files depend on each other.
const EXCEPTIONS: [(&str, &str); 2] = [
    (
        "energy::profile",
        "a scenario names a built-in device profile or gives one inline, and reading it takes the \
         profile's format",
    ),
    ("tcp::variant", "variant names and their properties are read from the transport registry"),
];

/// What a leaf file may use of the crate.
const LEAF_MAY_USE: [&str; 3] = ["units", "error", "config::serde_units"];

/// Every `crate::` path in `source` outside comments, as its segments up to the first `{`, `;`,
/// `,`, `(`, space or `>` (a grouped import `crate::{a, b::c}` gives `a` and `b::c`).
fn crate_paths(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            // `tcpenergy_crate::` or `my_crate::` are not the crate root.
            let before = rest[..at].chars().last();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                out.extend(inner.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()));
                continue;
            }
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
            out.push(rest[..end].trim_end_matches(':').to_string());
        }
        if code.contains("super::super") {
            out.push("super::super (above config)".to_string());
        }
    }
    out
}

/// The paths of `source` that point where the contract may not, with the file name.
fn violations(file: &str, source: &str) -> Vec<String> {
    crate_paths(source)
        .into_iter()
        .filter(|p| {
            let top = p.split("::").next().unwrap_or("");
            let exempt = EXCEPTIONS.iter().any(|(e, _)| p == e || p.starts_with(&format!("{e}::")));
            (BELOW_CONFIG_ONLY.contains(&top) || p.starts_with("super::super")) && !exempt
        })
        .map(|p| if p.starts_with("super::") { format!("{file}: {p}") } else { format!("{file}: crate::{p}") })
        .collect()
}

/// The paths of an excepted file (`file`, its `source`) that make it more than a leaf.
fn leaf_violations(file: &str, source: &str) -> Vec<String> {
    crate_paths(source)
        .into_iter()
        .filter(|p| !LEAF_MAY_USE.iter().any(|u| p == u || p.starts_with(&format!("{u}::"))))
        .map(|p| format!("{file}: crate::{p}"))
        .collect()
}

/// The source file of a module path such as `energy::profile`.
fn module_source(module: &str) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rel = module.replace("::", "/");
    let file = [src.join(format!("{rel}.rs")), src.join(rel).join("mod.rs")].into_iter().find(|p| p.exists());
    std::fs::read_to_string(file.unwrap_or_else(|| panic!("no source file for module {module}"))).unwrap()
}

#[test]
fn every_exception_config_uses_is_a_leaf() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config");
    let config: String = std::fs::read_dir(&dir).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect();
    let used = crate_paths(&config);
    for (module, _) in EXCEPTIONS {
        if !used.iter().any(|p| p == module || p.starts_with(&format!("{module}::"))) {
            continue;
        }
        // A test module's uses are not the file's.
        let source = module_source(module);
        let code = source.split("#[cfg(test)]").next().unwrap_or("");
        let found = leaf_violations(module, code);
        assert!(found.is_empty(), "config uses {module}, which must use nothing of the crate but {LEAF_MAY_USE:?}:\n{}", found.join("\n"));
    }
}

#[test]
fn the_leaf_check_names_a_file_that_reaches_back() {
    let source = "use crate::config::serde_units;\nuse crate::units::SimDuration;\nuse crate::config::Scenario;\n";
    assert_eq!(leaf_violations("energy::profile", source), ["energy::profile: crate::config::Scenario"]);
}

#[test]
fn the_scenario_contract_depends_only_on_units_errors_and_itself() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "rs")).collect();
    files.sort();
    assert!(files.len() >= 10, "read the contract's files from {}", dir.display());
    let found: Vec<String> = files
        .iter()
        .flat_map(|p| violations(&p.file_name().unwrap().to_string_lossy(), &std::fs::read_to_string(p).unwrap()))
        .collect();
    assert!(
        found.is_empty(),
        "config/ must not depend on the models or the build step; move the type into config as plain data, \
         or resolve it in crate::plan:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_names_a_path_into_the_models_and_passes_allowed_ones() {
    let source = "use crate::error::EngineError;\n\
                  use crate::net::routing::RouteTable;\n\
                  use crate::{units::SimDuration, tcp::segment};\n\
                  // crate::sim in a comment is not a dependency\n\
                  let p: crate::energy::profile::DeviceProfile = load();\n\
                  let x = my_crate::sim::run();\n\
                  let y = super::super::capture::Capture::default();\n";
    assert_eq!(
        violations("synthetic.rs", source),
        ["synthetic.rs: crate::net::routing::RouteTable", "synthetic.rs: crate::tcp::segment", "synthetic.rs: super::super (above config)"]
    );
}
