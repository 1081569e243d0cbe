-- Asynchronous AML: each business's webhook, the durable outbox of results to deliver with every
-- delivery attempt, asynchronous sanction and adverse-media requests, and risk-monitoring checks.
-- A result is written to webhook_deliveries in the same database transaction that completes it,
-- so it is delivered after any crash or restart. Deliveries and attempts are never deleted.

CREATE TABLE webhook_configs (
    business_id INTEGER PRIMARY KEY REFERENCES businesses (id),
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    business_id INTEGER NOT NULL REFERENCES businesses (id),
    event TEXT NOT NULL,
    record_id TEXT NOT NULL,
    -- An explicit destination (risk-monitoring callbackUrl); NULL: the business's webhook.
    url TEXT,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms INTEGER NOT NULL,
    -- Retries stop (dead letter) once this much time has passed since retry_from_ms.
    retry_from_ms INTEGER NOT NULL,
    last_error TEXT,
    delivered_at_ms INTEGER,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at_ms);
CREATE INDEX webhook_deliveries_by_created ON webhook_deliveries (business_id, created_at_ms, id);

CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
    attempt INTEGER NOT NULL,
    url TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    error TEXT,
    PRIMARY KEY (delivery_id, attempt)
);

CREATE TABLE aml_requests (
    id TEXT PRIMARY KEY,
    business_id INTEGER NOT NULL REFERENCES businesses (id),
    kind TEXT NOT NULL,
    query TEXT NOT NULL,
    params TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);
CREATE INDEX aml_requests_pending ON aml_requests (status);

CREATE TABLE risk_checks (
    id TEXT PRIMARY KEY,
    business_id INTEGER NOT NULL REFERENCES businesses (id),
    name TEXT NOT NULL,
    params TEXT NOT NULL,
    callback_url TEXT NOT NULL,
    status TEXT NOT NULL,
    created_by TEXT NOT NULL,
    -- JSON array of the hits already reported ("sanction:<id>", "pep:<id>", "media:<id>").
    reported TEXT NOT NULL,
    last_screened_at_ms INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);
CREATE INDEX risk_checks_by_created ON risk_checks (business_id, created_at_ms, id);
