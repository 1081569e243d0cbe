-- API keys become secrets (the EDD endpoint takes `Authorization: <apiKey>` alone): a key is
-- found by the SHA-256 digest of the whole key, and `api_key` keeps only its first 11 characters
-- (`vk_` and 8 hex digits), the key's id, shown and audited in place of the key. Keys issued
-- before get their digest when the store opens (`Store::secure_legacy_keys`); here every record
-- that named a whole key is cut to its id. The append-only tables' guards are lifted for this one
-- redaction and put back as they were.
ALTER TABLE api_keys ADD COLUMN key_digest TEXT;
CREATE UNIQUE INDEX api_keys_digest ON api_keys (key_digest);
-- Whether the key alone may authenticate (EDD's `Authorization: <apiKey>`): only keys issued as
-- secrets. Keys issued before were shown whole (listings, audit records), so they keep needing
-- their secret until they are rotated.
ALTER TABLE api_keys ADD COLUMN key_only_allowed INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER audit_log_no_update ON audit_log;
DROP TRIGGER edd_step_events_no_update ON edd_step_events;
DROP TRIGGER identity_lookups_no_update ON identity_lookups;

UPDATE list_entries SET created_by = substr(created_by, 1, 11)
    WHERE created_by IN (SELECT api_key FROM api_keys);
UPDATE list_audit SET actor = substr(actor, 1, 11)
    WHERE actor IN (SELECT api_key FROM api_keys);
UPDATE case_tasks SET created_by = substr(created_by, 1, 11)
    WHERE created_by IN (SELECT api_key FROM api_keys);
UPDATE edd_step_events SET actor_key = substr(actor_key, 1, 11)
    WHERE actor_key IN (SELECT api_key FROM api_keys);
UPDATE audit_log SET actor_key = substr(actor_key, 1, 11)
    WHERE actor_key IN (SELECT api_key FROM api_keys);
UPDATE risk_checks SET created_by = substr(created_by, 1, 11)
    WHERE created_by IN (SELECT api_key FROM api_keys);
UPDATE identity_lookups SET actor_key = substr(actor_key, 1, 11)
    WHERE actor_key IN (SELECT api_key FROM api_keys);
UPDATE reports SET created_by = substr(created_by, 1, 11)
    WHERE created_by IN (SELECT api_key FROM api_keys);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('the audit trail is append-only');
CREATE TRIGGER edd_step_events_no_update BEFORE UPDATE ON edd_step_events
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('the EDD step history is append-only');
CREATE TRIGGER identity_lookups_no_update BEFORE UPDATE ON identity_lookups
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('the lookup audit is append-only');

-- Webhook deliveries of one record go out in the order they were made: the worker claims a
-- delivery only when no older one of the same record is still pending.
CREATE INDEX webhook_deliveries_record ON webhook_deliveries (business_id, event, record_id, created_at_ms)
    WHERE status = 'pending';
