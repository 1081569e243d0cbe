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
fn replay_screens_writes_every_decision_and_scores_alerts_per_typology() {
    let dir = tempfile::tempdir().expect("tempdir");
    let payloads = dir.path().join("payloads.jsonl");
    let mut file = std::fs::File::create(&payloads).expect("file");
    // The same twelve debits in an hour (TM-004 from the 10th on), from account A7; the last
    // one pays a name on the bundled sanctions lists.
    for i in 0..12 {
        let receiver = if i == 11 { "Vladimir Putin" } else { "Ada Obi" };
        writeln!(
            file,
            r#"{{"transactionData":{{"reference":"R{i}","amount":1000,"type":"debit","transactionDate":"2026-03-02T10:{i:02}:00Z","senderAccount":"A7","receiverAccount":"A{}"}},"anonymizedUserData":{{"uniqueId":"mule","dateJoined":"2020-01-01"}},"screeningData":{{"senderName":"Chidi Eze","receiverName":"{receiver}"}}}}"#,
            100 + i
        )
        .expect("write");
    }
    drop(file);
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path
    };
    let mut labels = String::from("reference,tran_id,is_sar\n");
    for i in 0..12 {
        labels.push_str(&format!("R{i},{},{}\n", 1000 + i, i >= 10));
    }
    let labels = write("labels.csv", &labels);
    // Alert 0 (fan_out, SAR): two of the flagged debits. Alert 1 (fan_in, SAR): an approved
    // debit, and a member account never flagged. Alert 2 (cycle, decoy): a flagged debit.
    let alert_transactions = write(
        "alert_transactions.csv",
        "alert_id,alert_type,is_sar,tran_id,orig_acct,bene_acct,tx_type,base_amt,tran_timestamp\n\
         0,fan_out,True,1010,7,110,TRANSFER,1000,2026-03-02T00:00:00Z\n\
         0,fan_out,True,1011,7,111,TRANSFER,1000,2026-03-02T00:00:00Z\n\
         1,fan_in,True,1001,7,101,TRANSFER,1000,2026-03-02T00:00:00Z\n\
         2,cycle,False,1009,7,109,TRANSFER,1000,2026-03-02T00:00:00Z\n",
    );
    let alert_accounts = write(
        "alert_accounts.csv",
        "alert_id,alert_type,acct_id,acct_name,is_sar\n0,fan_out,7,7,True\n1,fan_in,55,55,True\n\
         2,cycle,9,9,False\n",
    );
    let out = dir.path().join("decisions.jsonl");
    let output = vigil()
        .args(["replay", "--json", "--labels"])
        .arg(&labels)
        .arg("--alert-transactions")
        .arg(&alert_transactions)
        .arg("--alert-accounts")
        .arg(&alert_accounts)
        .arg("--out")
        .arg(&out)
        .arg(&payloads)
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json report");
    assert!(
        report["screening"]
            .as_str()
            .is_some_and(|s| s.contains("entities")),
        "replay screens as serving does: {report}"
    );
    let alerts = &report["alerts"];
    assert_eq!(alerts["typologies"]["fan_out"]["found"], 1, "{alerts}");
    assert_eq!(alerts["typologies"]["fan_out"]["recall"], 1.0);
    // The fan-in's own debit was approved, but its window saw A7 flagged and A7 is not its
    // member (55 is): not found.
    assert_eq!(alerts["typologies"]["fan_in"]["found"], 0, "{alerts}");
    assert_eq!(alerts["typologies"]["cycle"]["decoys_found"], 1);
    assert_eq!(alerts["transactions"], 12);
    assert_eq!(alerts["transactions_flagged"], report["flagged"]["hits"]);
    assert_eq!(alerts["accounts_flagged"], 1, "one case account, A7");
    assert!(
        alerts["rules"]["TM-004"]["alerts_found"].as_u64() == Some(1),
        "{alerts}"
    );

    let decisions: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .expect("out file")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert_eq!(decisions.len(), 12);
    let last = decisions
        .iter()
        .find(|d| d["reference"] == "R11")
        .expect("R11");
    assert_eq!(last["account"], "A7");
    assert_eq!(last["receiverName"], "Vladimir Putin");
    assert_eq!(last["counterpartyAccount"], "A111");
    assert!(last["rules"].as_array().is_some_and(|r| !r.is_empty()));
    assert_ne!(
        last["screening"]["receiver"]["sanction"], "clear",
        "the listed receiver is screened in replay: {last}"
    );
    assert!(last["screeningMatches"]
        .as_array()
        .is_some_and(|m| !m.is_empty()));
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
