-- Tenants, API keys, transactions with their decisions, lists and devices.
CREATE TABLE businesses (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    processing_mode TEXT NOT NULL DEFAULT 'realtime',
    created_at_ms BIGINT NOT NULL
);

CREATE TABLE api_keys (
    api_key TEXT PRIMARY KEY,
    business_id BIGINT NOT NULL REFERENCES businesses (id),
    secret_digest TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT 'client',
    created_at_ms BIGINT NOT NULL,
    revoked_at_ms BIGINT
);

CREATE TABLE transactions (
    seq BIGSERIAL PRIMARY KEY,
    business_id BIGINT NOT NULL REFERENCES businesses (id),
    transaction_id TEXT NOT NULL UNIQUE,
    reference TEXT NOT NULL,
    user_id TEXT NOT NULL,
    intake TEXT NOT NULL,
    status TEXT NOT NULL,
    event_time_ms BIGINT NOT NULL,
    received_at_ms BIGINT NOT NULL,
    payload TEXT NOT NULL,
    action TEXT,
    risk_score DOUBLE PRECISION,
    decision TEXT,
    decided_at_ms BIGINT,
    UNIQUE (business_id, reference)
);
CREATE INDEX transactions_received_at ON transactions (received_at_ms);
CREATE INDEX transactions_user ON transactions (business_id, user_id);
CREATE INDEX transactions_pending ON transactions (status) WHERE status = 'pending';

CREATE TABLE list_entries (
    business_id BIGINT NOT NULL REFERENCES businesses (id),
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    PRIMARY KEY (business_id, kind, value)
);

-- Append-only: every add and remove of a list entry, with who and when.
CREATE TABLE list_audit (
    id BIGSERIAL PRIMARY KEY,
    business_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    operation TEXT NOT NULL,
    actor TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);

CREATE TABLE devices (
    business_id BIGINT NOT NULL REFERENCES businesses (id),
    customer_id TEXT NOT NULL,
    device_id TEXT NOT NULL,
    manufacturer TEXT,
    model TEXT,
    name TEXT,
    os_name TEXT,
    os_version TEXT,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (business_id, customer_id, device_id)
);
