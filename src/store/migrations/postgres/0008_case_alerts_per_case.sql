-- A transaction with findings of two typologies contributes to both cases (one case per account
-- and typology): an alert is unique per (case, transaction), no longer per transaction, which
-- linked such a transaction to the first case only.
ALTER TABLE case_alerts DROP CONSTRAINT case_alerts_business_id_transaction_id_key;
ALTER TABLE case_alerts ADD CONSTRAINT case_alerts_business_id_case_id_transaction_id_key
    UNIQUE (business_id, case_id, transaction_id);
