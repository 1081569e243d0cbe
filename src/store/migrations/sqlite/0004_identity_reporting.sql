-- Identity and registry lookups (NIN, BVN, CAC) and FIU reporting in goAML.
--
-- identity_registry is the local registry provider's data (imported with `vigil registry import`);
-- identity_lookups is the append-only audit of every lookup (tenant, key, time, what was asked).
-- Reports and their items are per business; records are never deleted.

CREATE TABLE identity_registry (
    kind TEXT NOT NULL,
    number TEXT NOT NULL,
    record TEXT NOT NULL,
    source TEXT NOT NULL,
    imported_at_ms INTEGER NOT NULL,
    PRIMARY KEY (kind, number)
);

CREATE TABLE identity_lookups (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    business_id INTEGER NOT NULL REFERENCES businesses (id),
    kind TEXT NOT NULL,
    query_key TEXT NOT NULL,
    query TEXT NOT NULL,
    outcome TEXT NOT NULL,
    provider TEXT NOT NULL,
    cached INTEGER NOT NULL,
    purpose TEXT NOT NULL,
    actor_key TEXT NOT NULL,
    at_ms INTEGER NOT NULL
);
CREATE INDEX identity_lookups_by_business ON identity_lookups (business_id, seq);

ALTER TABLE cdd_verifications ADD COLUMN reason TEXT;

CREATE TABLE reporting_configs (
    business_id INTEGER PRIMARY KEY REFERENCES businesses (id),
    client_url TEXT NOT NULL,
    auth TEXT NOT NULL,
    entity TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

CREATE TABLE reports (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    business_id INTEGER NOT NULL REFERENCES businesses (id),
    report_type TEXT NOT NULL,
    source TEXT NOT NULL,
    status TEXT NOT NULL,
    total INTEGER NOT NULL,
    error TEXT,
    xml TEXT,
    created_by TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    built_at_ms INTEGER
);
CREATE INDEX reports_by_business ON reports (business_id, seq);

CREATE TABLE report_items (
    report_id TEXT NOT NULL REFERENCES reports (id),
    business_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    transaction_id TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (report_id, position),
    UNIQUE (report_id, transaction_id)
);

CREATE TRIGGER identity_lookups_no_update BEFORE UPDATE ON identity_lookups
BEGIN SELECT RAISE(ABORT, 'the lookup audit is append-only'); END;
CREATE TRIGGER identity_lookups_no_delete BEFORE DELETE ON identity_lookups
BEGIN SELECT RAISE(ABORT, 'the lookup audit is append-only'); END;
CREATE TRIGGER reports_no_delete BEFORE DELETE ON reports
BEGIN SELECT RAISE(ABORT, 'records are never deleted'); END;
CREATE TRIGGER report_items_no_delete BEFORE DELETE ON report_items
BEGIN SELECT RAISE(ABORT, 'records are never deleted'); END;
