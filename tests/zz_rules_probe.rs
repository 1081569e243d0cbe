// TEMPORARY probe harness (rules author); will be deleted.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use vigil::engine::rules::{fixtures, RuleSet, SandboxLimits};

#[test]
fn probe() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::var("RULES_DIR")
        .map(PathBuf::from)
        .unwrap_or(root.join("rules"));
    let rules = match RuleSet::load(&dir, SandboxLimits::default()) {
        Ok(r) => r,
        Err(e) => {
            println!("LOAD ERROR: {e}");
            return;
        }
    };
    let files = fixtures::load_dir(&root.join("fixtures/rules")).unwrap_or_else(|e| panic!("{e}"));
    let report = fixtures::run(&Arc::new(rules), &files);
    println!("{}", report.summary());
}
