-- A transaction with findings of two typologies contributes to both cases (one case per account
-- and typology): an alert is unique per (case, transaction), no longer per transaction, which
-- linked such a transaction to the first case only. SQLite cannot change a table's constraint,
-- so the table is rebuilt with its rows, index and trigger (DROP TABLE fires no triggers).
CREATE TABLE case_alerts_per_case (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    business_id INTEGER NOT NULL,
    case_id TEXT NOT NULL REFERENCES cases (id),
    transaction_id TEXT NOT NULL,
    reference TEXT NOT NULL,
    action TEXT NOT NULL,
    risk_score TEXT NOT NULL,
    rules TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    UNIQUE (business_id, case_id, transaction_id)
);
INSERT INTO case_alerts_per_case (seq, business_id, case_id, transaction_id, reference, action,
    risk_score, rules, created_at_ms)
SELECT seq, business_id, case_id, transaction_id, reference, action, risk_score, rules,
    created_at_ms FROM case_alerts;
DROP TABLE case_alerts;
ALTER TABLE case_alerts_per_case RENAME TO case_alerts;
CREATE INDEX case_alerts_case ON case_alerts (case_id);
CREATE TRIGGER case_alerts_no_delete BEFORE DELETE ON case_alerts
BEGIN SELECT RAISE(ABORT, 'records are never deleted'); END;
