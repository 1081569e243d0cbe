//! The `vigil` binary's offline commands, run as a user would run them.

use std::io::Write;
use std::process::Command;

fn vigil() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vigil"));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

#[test]
fn replay_reports_hits_decisions_and_label_quality() {
    let dir = tempfile::tempdir().expect("tempdir");
    let payloads = dir.path().join("payloads.jsonl");
    let mut file = std::fs::File::create(&payloads).expect("file");
    // Twelve debits from one user to twelve receivers within an hour: fan-out and 1 h velocity.
    for i in 0..12 {
        writeln!(
            file,
            r#"{{"transactionData":{{"reference":"R{i}","amount":1000,"type":"debit","transactionDate":"2026-03-02T10:{i:02}:00Z","receiverAccount":"ACC{i}"}},"anonymizedUserData":{{"uniqueId":"mule","dateJoined":"2020-01-01"}}}}"#
        )
        .expect("write");
    }
    writeln!(file, "not json").expect("write");
    drop(file);
    let labels = dir.path().join("labels.csv");
    let mut labels_file = std::fs::File::create(&labels).expect("labels");
    writeln!(labels_file, "reference,is_sar").expect("write");
    for i in 0..12 {
        writeln!(
            labels_file,
            "R{i},{}",
            if i >= 10 { "True" } else { "False" }
        )
        .expect("write");
    }
    drop(labels_file);

    let output = vigil()
        .args(["replay", "--json", "--labels"])
        .arg(&labels)
        .arg(&payloads)
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json report");
    assert_eq!(report["events"], 12);
    assert_eq!(report["invalid"], 1);
    assert_eq!(report["labelled_positive"], 2);
    // The 10th debit in the hour (9 before it) trips TM-004; the 11th receiver trips TM-015.
    let velocity = &report["rules"]["TM-004"];
    assert_eq!(velocity["hits"], 3, "{report}");
    assert_eq!(velocity["true_positives"], 2);
    assert_eq!(velocity["recall"], 1.0);
    assert!(report["events_per_second"]
        .as_f64()
        .is_some_and(|v| v > 0.0));
}

#[test]
fn rules_test_passes_on_the_bundled_pack_and_fails_on_a_broken_fixture() {
    let output = vigil().args(["rules", "test"]).output().expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("all fixtures passed"));

    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("wrong.json"),
        r#"{"cases":[{"name":"wrong on purpose","steps":[{"tx":{"transactionData":{"amount":1}},"expectHits":["TM-001"]}]}]}"#,
    )
    .expect("fixture");
    let output = vigil()
        .args(["rules", "test", "--fixtures"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("expected TM-001 to hit"), "{stdout}");
}

#[test]
fn keys_are_created_listed_and_revoked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().to_str().expect("utf-8 path");
    let output = vigil()
        .args([
            "keys",
            "create",
            "--business",
            "acme",
            "--json",
            "--data-dir",
            data,
        ])
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let key: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let api_key = key["apiKey"].as_str().expect("apiKey");
    assert!(api_key.starts_with("vk_"));
    assert!(key["apiSecret"]
        .as_str()
        .is_some_and(|s| s.starts_with("vs_") && s.len() == 67));
    let list = vigil()
        .args(["keys", "list", "--data-dir", data])
        .output()
        .expect("runs");
    let listed = String::from_utf8_lossy(&list.stdout);
    // Listed by id: the key itself is a credential, stored only as a digest.
    let id = vigil::store::key_id(api_key);
    assert!(
        listed.contains(&id) && listed.contains("active"),
        "{listed}"
    );
    assert!(!listed.contains(api_key), "keys are never listed whole");
    assert!(
        !listed.contains(key["apiSecret"].as_str().expect("secret")),
        "secrets are never listed"
    );
    let revoke = vigil()
        .args(["keys", "revoke", api_key, "--data-dir", data])
        .output()
        .expect("runs");
    assert!(revoke.status.success());
    let again = vigil()
        .args(["keys", "revoke", api_key, "--data-dir", data])
        .output()
        .expect("runs");
    assert!(!again.status.success());
    let by_id = vigil()
        .args(["keys", "revoke", &id, "--data-dir", data])
        .output()
        .expect("runs");
    assert!(!by_id.status.success(), "already revoked, named by its id");
    let list = vigil()
        .args(["keys", "list", "--data-dir", data])
        .output()
        .expect("runs");
    assert!(String::from_utf8_lossy(&list.stdout).contains("revoked"));
}
