-- The accounts of an account-level (typology) case: every account a detector's evidence named
-- when the case was opened or joined. A later finding of the same typology that names one of them
-- joins that open case instead of opening another, so one laundering network is one case.
CREATE TABLE case_accounts (
    business_id INTEGER NOT NULL,
    case_id TEXT NOT NULL REFERENCES cases (id),
    typology TEXT NOT NULL,
    account TEXT NOT NULL,
    PRIMARY KEY (business_id, typology, account, case_id)
);
CREATE INDEX case_accounts_case ON case_accounts (case_id);
CREATE TRIGGER case_accounts_no_delete BEFORE DELETE ON case_accounts
BEGIN SELECT RAISE(ABORT, 'records are never deleted'); END;
