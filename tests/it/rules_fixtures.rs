//! Runs the bundled rule pack (`rules/`) against its fixtures (`fixtures/rules/`): every rule must
//! compile, every expectation must hold, and every rule must have a fixture that triggers it and a
//! near miss that must not. `vigil rules test` runs the same check.

use std::path::Path;
use std::sync::Arc;

use vigil::engine::rules::{fixtures, RuleSet, SandboxLimits};

#[test]
fn the_bundled_rule_pack_passes_all_of_its_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = RuleSet::load(&root.join("rules"), SandboxLimits::default())
        .unwrap_or_else(|e| panic!("rule pack does not load: {e}"));
    assert!(
        rules.rules.len() >= 15,
        "the default pack has {} rules",
        rules.rules.len()
    );
    let files = fixtures::load_dir(&root.join("fixtures/rules"))
        .unwrap_or_else(|e| panic!("fixtures do not load: {e}"));
    let report = fixtures::run(&Arc::new(rules), &files);
    assert!(report.passed(), "{}", report.summary());
    assert!(report.steps > 0);
}
