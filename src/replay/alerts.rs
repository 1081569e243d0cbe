//! Alert-level scoring of a replay against labelled alerts (AMLSim's `alert_transactions.csv` and
//! `alert_accounts.csv`, optionally gzipped).
//!
//! Data flow: [`Alerts::load`] reads each alert's typology, whether it is a SAR (non-SAR alerts
//! are decoys with the same shape), its transactions (by AMLSim `tran_id`, mapped to payload
//! references through the labels file's `tran_id` column) and member accounts, and its window:
//! from its first transaction's day to the end of its last one's. [`AlertScore`] then takes every
//! replayed decision ([`Flag`]) and counts an alert as **found** when a flagged decision is one of
//! its transactions, or names one of its member accounts (as the case account, the sender) inside
//! its window. The report gives per typology the alerts found and their recall (SARs) and the
//! decoys found, the review load (transactions flagged, case accounts flagged, both as shares of
//! what was replayed), and each rule's contribution (alerts found by a decision it hit).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use super::{truthy, CsvTable, ReplayError};
use crate::cases::auto::{CaseKey, CaseNetwork};

const DAY_MS: i64 = 86_400_000;

/// One labelled alert.
#[derive(Debug, Clone)]
struct Alert {
    typology: String,
    sar: bool,
    start_ms: i64,
    end_ms: i64,
    accounts: HashSet<String>,
}

/// The labelled alerts of a replay.
#[derive(Debug, Default)]
pub struct Alerts {
    alerts: BTreeMap<String, Alert>,
    /// Payload reference → the alerts it belongs to.
    by_reference: HashMap<String, Vec<String>>,
    /// Account (as the payloads name it) → the alerts it is a member of.
    by_account: HashMap<String, Vec<String>>,
}

/// Where the alert files are and how their ids map onto the payloads.
#[derive(Debug, Clone)]
pub struct AlertFiles {
    /// `alert_id,alert_type,is_sar,tran_id,…,tran_timestamp`.
    pub transactions: PathBuf,
    /// `alert_id,alert_type,acct_id,…` (optional: without it only transactions count).
    pub accounts: Option<PathBuf>,
    /// `reference,tran_id,…`: the labels file, mapping AMLSim transaction ids to references.
    pub references: PathBuf,
    /// How an AMLSim account id is written in the payloads: `{}` is replaced by the id.
    pub account_format: String,
}

impl Alerts {
    pub fn load(files: &AlertFiles) -> Result<Alerts, ReplayError> {
        let labels = CsvTable::read(&files.references)?;
        let (reference, tran) = (labels.column("reference")?, labels.column("tran_id")?);
        let references: HashMap<&str, &str> = labels
            .rows
            .iter()
            .filter_map(|row| Some((row.get(tran)?, row.get(reference)?)))
            .collect();

        let table = CsvTable::read(&files.transactions)?;
        let (id, kind, sar, tran_id, time) = (
            table.column("alert_id")?,
            table.column("alert_type")?,
            table.column("is_sar")?,
            table.column("tran_id")?,
            table.column("tran_timestamp")?,
        );
        let mut alerts = Alerts::default();
        for row in &table.rows {
            let field = |index: usize| row.get(index).unwrap_or("");
            let at = super::parse_time_ms(field(time)).ok_or_else(|| ReplayError::Labels {
                path: files.transactions.clone(),
                problem: format!("bad tran_timestamp {}", field(time)),
            })?;
            let alert = alerts
                .alerts
                .entry(field(id).to_owned())
                .or_insert_with(|| Alert {
                    typology: field(kind).to_owned(),
                    sar: truthy(field(sar)),
                    start_ms: i64::MAX,
                    end_ms: i64::MIN,
                    accounts: HashSet::new(),
                });
            // Day resolution: the window runs to the end of the last transaction's day.
            let day = at.div_euclid(DAY_MS) * DAY_MS;
            alert.start_ms = alert.start_ms.min(day);
            alert.end_ms = alert.end_ms.max(day + DAY_MS - 1);
            if let Some(reference) = references.get(field(tran_id)) {
                alerts
                    .by_reference
                    .entry((*reference).to_owned())
                    .or_default()
                    .push(field(id).to_owned());
            }
        }
        if let Some(path) = &files.accounts {
            let table = CsvTable::read(path)?;
            let (id, account) = (table.column("alert_id")?, table.column("acct_id")?);
            for row in &table.rows {
                let (Some(alert_id), Some(account)) = (row.get(id), row.get(account)) else {
                    continue;
                };
                let Some(alert) = alerts.alerts.get_mut(alert_id) else {
                    continue;
                };
                let name = files.account_format.replace("{}", account);
                alert.accounts.insert(name.clone());
                alerts
                    .by_account
                    .entry(name)
                    .or_default()
                    .push(alert_id.to_owned());
            }
        }
        Ok(alerts)
    }

    pub fn len(&self) -> usize {
        self.alerts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.alerts.is_empty()
    }
}

/// One replayed decision, as alert scoring sees it.
#[derive(Debug, Clone)]
pub struct Flag<'a> {
    pub reference: &'a str,
    pub event_time_ms: i64,
    /// The account the transaction was reported for (the customer's own account).
    pub account: &'a str,
    /// What a flagged decision brings to cases: one key per detector finding (the account it is
    /// about and the accounts involved), else one on `account` ("transaction").
    pub cases: &'a [CaseKey],
    /// The other party's account, when known.
    pub counterparty_account: Option<&'a str>,
    pub flagged: bool,
    /// The rules that hit (shadow ones included: they are scored the same way).
    pub rules: &'a [String],
}

/// Per typology: alerts and decoys, and how many were found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TypologyScore {
    pub alerts: u64,
    pub found: u64,
    pub recall: Option<f64>,
    pub decoys: u64,
    pub decoys_found: u64,
}

/// One rule's contribution: the SAR alerts (by typology) a decision it hit helped find.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RuleContribution {
    pub alerts_found: u64,
    pub by_typology: BTreeMap<String, u64>,
}

/// The alert-level report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AlertReport {
    pub typologies: BTreeMap<String, TypologyScore>,
    pub transactions: u64,
    pub transactions_flagged: u64,
    pub transactions_flagged_share: Option<f64>,
    pub accounts: u64,
    pub accounts_flagged: u64,
    pub accounts_flagged_share: Option<f64>,
    /// Cases opened: distinct (account, typology) after findings joined the open case of their
    /// network ([`CaseNetwork`]).
    pub cases: u64,
    pub cases_by_typology: BTreeMap<String, u64>,
    pub rules: BTreeMap<String, RuleContribution>,
}

/// Accumulates decisions into an [`AlertReport`].
pub struct AlertScore<'a> {
    alerts: &'a Alerts,
    found: HashSet<String>,
    found_by_rule: HashMap<String, HashSet<String>>,
    accounts: HashSet<String>,
    accounts_flagged: HashSet<String>,
    cases: HashSet<(String, String)>,
    network: CaseNetwork,
    transactions: u64,
    transactions_flagged: u64,
}

impl<'a> AlertScore<'a> {
    pub fn new(alerts: &'a Alerts) -> Self {
        AlertScore {
            alerts,
            found: HashSet::new(),
            found_by_rule: HashMap::new(),
            accounts: HashSet::new(),
            accounts_flagged: HashSet::new(),
            cases: HashSet::new(),
            network: CaseNetwork::default(),
            transactions: 0,
            transactions_flagged: 0,
        }
    }

    pub fn observe(&mut self, flag: &Flag<'_>) {
        self.transactions += 1;
        for account in std::iter::once(flag.account).chain(flag.counterparty_account) {
            if !account.is_empty() && !self.accounts.contains(account) {
                self.accounts.insert(account.to_owned());
            }
        }
        if !flag.flagged {
            return;
        }
        self.transactions_flagged += 1;
        for key in flag.cases {
            let case = self.network.assign(key);
            if !self.accounts_flagged.contains(&case.0) {
                self.accounts_flagged.insert(case.0.clone());
            }
            self.cases.insert(case);
        }
        let by_transaction = self
            .alerts
            .by_reference
            .get(flag.reference)
            .into_iter()
            .flatten();
        let by_account = flag
            .cases
            .iter()
            .flat_map(|key| {
                self.alerts
                    .by_account
                    .get(&key.account)
                    .into_iter()
                    .flatten()
            })
            .filter(|id| {
                self.alerts.alerts.get(*id).is_some_and(|alert| {
                    (alert.start_ms..=alert.end_ms).contains(&flag.event_time_ms)
                })
            });
        for id in by_transaction.chain(by_account) {
            self.found.insert(id.clone());
            for rule in flag.rules {
                self.found_by_rule
                    .entry(rule.clone())
                    .or_default()
                    .insert(id.clone());
            }
        }
    }

    pub fn report(self) -> AlertReport {
        let share = |part: u64, whole: u64| (whole > 0).then(|| part as f64 / whole as f64);
        let mut report = AlertReport {
            transactions: self.transactions,
            transactions_flagged: self.transactions_flagged,
            transactions_flagged_share: share(self.transactions_flagged, self.transactions),
            accounts: self.accounts.len() as u64,
            accounts_flagged: self.accounts_flagged.len() as u64,
            accounts_flagged_share: share(
                self.accounts_flagged.len() as u64,
                self.accounts.len() as u64,
            ),
            cases: self.cases.len() as u64,
            ..AlertReport::default()
        };
        for (_, typology) in &self.cases {
            *report
                .cases_by_typology
                .entry(typology.clone())
                .or_default() += 1;
        }
        for (id, alert) in &self.alerts.alerts {
            let score = report.typologies.entry(alert.typology.clone()).or_default();
            let found = self.found.contains(id);
            if alert.sar {
                score.alerts += 1;
                score.found += u64::from(found);
            } else {
                score.decoys += 1;
                score.decoys_found += u64::from(found);
            }
        }
        for score in report.typologies.values_mut() {
            score.recall = share(score.found, score.alerts);
        }
        for (rule, ids) in self.found_by_rule {
            let contribution = report.rules.entry(rule).or_default();
            for id in ids {
                let Some(alert) = self.alerts.alerts.get(&id).filter(|a| a.sar) else {
                    continue;
                };
                contribution.alerts_found += 1;
                *contribution
                    .by_typology
                    .entry(alert.typology.clone())
                    .or_default() += 1;
            }
        }
        report
    }
}

impl AlertReport {
    /// The lines `vigil replay` prints.
    pub fn render(&self) -> String {
        let pct = |v: Option<f64>| {
            v.map(|v| format!("{:6.2}%", v * 100.0))
                .unwrap_or_else(|| "      -".into())
        };
        let mut out = String::new();
        out.push_str(&format!(
            "review load: transactions flagged {} of {} ({}), accounts with a case {} of {} seen ({}), cases {}\n",
            self.transactions_flagged,
            self.transactions,
            pct(self.transactions_flagged_share).trim(),
            self.accounts_flagged,
            self.accounts,
            pct(self.accounts_flagged_share).trim(),
            self.cases
        ));
        if !self.cases_by_typology.is_empty() {
            let parts: Vec<String> = self
                .cases_by_typology
                .iter()
                .map(|(t, n)| format!("{t} {n}"))
                .collect();
            out.push_str(&format!("cases per typology: {}\n", parts.join(", ")));
        }
        out.push_str(&format!(
            "{:<16} {:>7} {:>7} {:>9} {:>7} {:>12}\n",
            "typology", "alerts", "found", "recall", "decoys", "decoys found"
        ));
        for (typology, score) in &self.typologies {
            out.push_str(&format!(
                "{:<16} {:>7} {:>7} {:>9} {:>7} {:>12}\n",
                typology,
                score.alerts,
                score.found,
                pct(score.recall),
                score.decoys,
                score.decoys_found
            ));
        }
        if !self.rules.is_empty() {
            out.push_str("alerts found per rule (SAR alerts a decision it hit helped find):\n");
            for (rule, contribution) in &self.rules {
                let parts: Vec<String> = contribution
                    .by_typology
                    .iter()
                    .map(|(t, n)| format!("{t} {n}"))
                    .collect();
                out.push_str(&format!(
                    "  {:<10} {:>5}  {}\n",
                    rule,
                    contribution.alerts_found,
                    parts.join(", ")
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path
    }

    /// Two alerts (a fan-in SAR and a cycle decoy) and one fan-out SAR, on a handful of payloads.
    fn alerts(dir: &Path) -> Alerts {
        let references = write(
            dir,
            "labels.csv",
            "reference,tran_id,is_sar\nR1,1,True\nR2,2,True\nR3,3,False\nR4,4,True\nR5,5,False\n",
        );
        let transactions = write(
            dir,
            "alert_transactions.csv",
            "alert_id,alert_type,is_sar,tran_id,orig_acct,bene_acct,tx_type,base_amt,tran_timestamp\n\
             0,fan_in,True,1,10,20,TRANSFER,100,2017-01-05T00:00:00Z\n\
             0,fan_in,True,2,11,20,TRANSFER,100,2017-01-09T00:00:00Z\n\
             1,cycle,False,3,30,31,TRANSFER,100,2017-02-01T00:00:00Z\n\
             2,fan_out,True,4,40,41,TRANSFER,100,2017-03-01T00:00:00Z\n",
        );
        let accounts = write(
            dir,
            "alert_accounts.csv",
            "alert_id,alert_type,acct_id,acct_name,is_sar\n0,fan_in,20,20,True\n0,fan_in,10,10,True\n\
             1,cycle,30,30,False\n2,fan_out,40,40,True\n",
        );
        Alerts::load(&AlertFiles {
            transactions,
            accounts: Some(accounts),
            references,
            account_format: "A{}".into(),
        })
        .expect("loads")
    }

    fn ms(text: &str) -> i64 {
        super::super::parse_time_ms(text).expect("time")
    }

    #[test]
    fn an_alert_is_found_by_one_of_its_transactions_or_a_member_account_inside_its_window() {
        let dir = tempfile::tempdir().expect("dir");
        let alerts = alerts(dir.path());
        assert_eq!(alerts.len(), 3);
        let rules = vec!["T-1".to_owned()];
        let none: Vec<String> = Vec::new();
        let case = |account: &str| {
            vec![CaseKey {
                account: account.to_owned(),
                typology: "transaction".to_owned(),
                members: Vec::new(),
            }]
        };
        let (case_a20, case_a40, case_a30) = (case("A20"), case("A40"), case("A30"));
        let mut score = AlertScore::new(&alerts);
        // The fan-in's member A20 flagged on another payment inside the window: found.
        score.observe(&Flag {
            reference: "X1",
            event_time_ms: ms("2017-01-09T18:00:00Z"),
            account: "A20",
            cases: &case_a20,
            counterparty_account: Some("A99"),
            flagged: true,
            rules: &rules,
        });
        // The fan-out's member flagged a day after its window: a near miss, not found.
        score.observe(&Flag {
            reference: "X2",
            event_time_ms: ms("2017-03-02T00:00:00Z"),
            account: "A40",
            cases: &case_a40,
            counterparty_account: None,
            flagged: true,
            rules: &rules,
        });
        // The fan-out's own transaction approved: not found.
        score.observe(&Flag {
            reference: "R4",
            event_time_ms: ms("2017-03-01T10:00:00Z"),
            account: "A40",
            cases: &case_a40,
            counterparty_account: Some("A41"),
            flagged: false,
            rules: &none,
        });
        // The decoy's transaction flagged: a decoy found, counted apart.
        score.observe(&Flag {
            reference: "R3",
            event_time_ms: ms("2017-02-01T10:00:00Z"),
            account: "A30",
            cases: &case_a30,
            counterparty_account: Some("A31"),
            flagged: true,
            rules: &rules,
        });
        let report = score.report();
        let fan_in = &report.typologies["fan_in"];
        assert_eq!(
            (fan_in.alerts, fan_in.found, fan_in.recall),
            (1, 1, Some(1.0))
        );
        let fan_out = &report.typologies["fan_out"];
        assert_eq!((fan_out.alerts, fan_out.found), (1, 0));
        let cycle = &report.typologies["cycle"];
        assert_eq!((cycle.alerts, cycle.decoys, cycle.decoys_found), (0, 1, 1));
        assert_eq!(cycle.recall, None);
        assert_eq!(report.transactions, 4);
        assert_eq!(report.transactions_flagged, 3);
        // Accounts seen: A20, A99, A40, A41, A30, A31; flagged as case accounts: A20, A40, A30.
        assert_eq!((report.accounts, report.accounts_flagged), (6, 3));
        assert_eq!(report.cases, 3);
        assert_eq!(report.accounts_flagged_share, Some(0.5));
        // T-1 helped find one SAR alert (the decoy is not counted as a find).
        assert_eq!(report.rules["T-1"].alerts_found, 1);
        assert_eq!(report.rules["T-1"].by_typology["fan_in"], 1);
        assert!(report.render().contains("fan_in"));
    }
}
