-- Compliance workflows: analysts, cases (alerts, tasks, comments, log), CDD customers and their
-- verifications, EDD requests (steps, step history), and the append-only audit trail.
-- Records are never deleted (triggers refuse it); the audit trail and the case log, comments and
-- EDD step history are never changed either.

CREATE TABLE analysts (
    business_id BIGINT NOT NULL REFERENCES businesses (id),
    id TEXT NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT,
    active BIGINT NOT NULL DEFAULT 1,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (business_id, id)
);

CREATE TABLE cases (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    business_id BIGINT NOT NULL REFERENCES businesses (id),
    module TEXT NOT NULL,
    record_id TEXT,
    record_type TEXT,
    record_name TEXT,
    subject_id TEXT,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    priority TEXT NOT NULL,
    status TEXT NOT NULL,
    assigned_to TEXT,
    assigned_by TEXT,
    due_at_ms BIGINT,
    is_escalated BIGINT NOT NULL DEFAULT 0,
    version BIGINT NOT NULL DEFAULT 0,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
CREATE INDEX cases_by_created ON cases (business_id, created_at_ms, id);
-- At most one open automatic case per monitored user and module.
CREATE UNIQUE INDEX cases_open_subject ON cases (business_id, module, subject_id)
    WHERE subject_id IS NOT NULL AND status IN ('open', 'in progress');

CREATE TABLE case_alerts (
    seq BIGSERIAL PRIMARY KEY,
    business_id BIGINT NOT NULL,
    case_id TEXT NOT NULL REFERENCES cases (id),
    transaction_id TEXT NOT NULL,
    reference TEXT NOT NULL,
    action TEXT NOT NULL,
    risk_score TEXT NOT NULL,
    rules TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    UNIQUE (business_id, transaction_id)
);
CREATE INDEX case_alerts_case ON case_alerts (case_id);

CREATE TABLE case_tasks (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    case_id TEXT NOT NULL REFERENCES cases (id),
    business_id BIGINT NOT NULL,
    text TEXT NOT NULL,
    done BIGINT NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    completed_by TEXT,
    completed_at_ms BIGINT
);
CREATE INDEX case_tasks_case ON case_tasks (case_id);

CREATE TABLE case_comments (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    case_id TEXT NOT NULL REFERENCES cases (id),
    business_id BIGINT NOT NULL,
    text TEXT NOT NULL,
    user_id TEXT NOT NULL,
    tagged_users TEXT NOT NULL,
    attachments TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX case_comments_case ON case_comments (case_id);

CREATE TABLE case_log (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    case_id TEXT NOT NULL REFERENCES cases (id),
    business_id BIGINT NOT NULL,
    status TEXT NOT NULL,
    message TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX case_log_case ON case_log (case_id);

CREATE TABLE cdd_customers (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    business_id BIGINT NOT NULL REFERENCES businesses (id),
    unique_id TEXT NOT NULL,
    type TEXT NOT NULL,
    account_number TEXT,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    cdd_status TEXT NOT NULL,
    kyc_level TEXT NOT NULL,
    risk_score DOUBLE PRECISION NOT NULL,
    risk_level TEXT NOT NULL,
    risk_tier TEXT NOT NULL,
    rated_by TEXT NOT NULL,
    rated_at_ms BIGINT NOT NULL,
    rating TEXT NOT NULL,
    analysis TEXT NOT NULL,
    profile TEXT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    UNIQUE (business_id, unique_id)
);
CREATE INDEX cdd_customers_account ON cdd_customers (business_id, account_number);
CREATE INDEX cdd_customers_by_created ON cdd_customers (business_id, created_at_ms, id);

CREATE TABLE cdd_verifications (
    seq BIGSERIAL PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES cdd_customers (id),
    business_id BIGINT NOT NULL,
    grp TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    request_id TEXT NOT NULL,
    last_run_at_ms BIGINT,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    UNIQUE (customer_id, key)
);

CREATE TABLE edd_requests (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    business_id BIGINT NOT NULL REFERENCES businesses (id),
    unique_id TEXT NOT NULL,
    pipeline TEXT NOT NULL,
    status TEXT NOT NULL,
    subject TEXT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
CREATE INDEX edd_requests_by_created ON edd_requests (business_id, created_at_ms, id);

CREATE TABLE edd_steps (
    seq BIGSERIAL PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES edd_requests (id),
    business_id BIGINT NOT NULL,
    position BIGINT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    note TEXT,
    user_id TEXT,
    updated_at_ms BIGINT NOT NULL,
    UNIQUE (request_id, position),
    UNIQUE (request_id, key)
);

CREATE TABLE edd_step_events (
    seq BIGSERIAL PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES edd_requests (id),
    business_id BIGINT NOT NULL,
    step_key TEXT NOT NULL,
    action TEXT NOT NULL,
    from_status TEXT NOT NULL,
    to_status TEXT NOT NULL,
    request_status TEXT NOT NULL,
    note TEXT,
    user_id TEXT,
    actor_key TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);
CREATE INDEX edd_step_events_request ON edd_step_events (request_id);

-- Append-only: who changed which record, when, and what changed (a JSON diff).
CREATE TABLE audit_log (
    seq BIGSERIAL PRIMARY KEY,
    business_id BIGINT NOT NULL,
    entity_type TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    action TEXT NOT NULL,
    actor_key TEXT NOT NULL,
    actor_user TEXT,
    at_ms BIGINT NOT NULL,
    changes TEXT NOT NULL
);
CREATE INDEX audit_log_entity ON audit_log (business_id, entity_type, entity_id, seq);

CREATE FUNCTION vigil_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% on % is refused: %', TG_OP, TG_TABLE_NAME, TG_ARGV[0];
END;
$$;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('the audit trail is append-only');
CREATE TRIGGER case_log_no_update BEFORE UPDATE ON case_log
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('the case log is append-only');
CREATE TRIGGER case_comments_no_update BEFORE UPDATE ON case_comments
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('case comments are never changed');
CREATE TRIGGER edd_step_events_no_update BEFORE UPDATE ON edd_step_events
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('the EDD step history is append-only');
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('the audit trail is append-only');
CREATE TRIGGER analysts_no_delete BEFORE DELETE ON analysts
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER cases_no_delete BEFORE DELETE ON cases
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER case_alerts_no_delete BEFORE DELETE ON case_alerts
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER case_tasks_no_delete BEFORE DELETE ON case_tasks
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER case_comments_no_delete BEFORE DELETE ON case_comments
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER case_log_no_delete BEFORE DELETE ON case_log
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER cdd_customers_no_delete BEFORE DELETE ON cdd_customers
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER cdd_verifications_no_delete BEFORE DELETE ON cdd_verifications
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER edd_requests_no_delete BEFORE DELETE ON edd_requests
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER edd_steps_no_delete BEFORE DELETE ON edd_steps
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
CREATE TRIGGER edd_step_events_no_delete BEFORE DELETE ON edd_step_events
    FOR EACH ROW EXECUTE FUNCTION vigil_refuse_change('records are never deleted');
