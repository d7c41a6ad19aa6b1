-- toolgate store, PostgreSQL schema version 2: calls waiting for a person,
-- by idempotency key; answered from any worker, run once.
CREATE TABLE approvals (
    id BIGSERIAL PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    session_id TEXT,
    tool TEXT NOT NULL,
    view TEXT NOT NULL,
    worker TEXT NOT NULL,
    created BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('pending', 'approved', 'denied', 'expired', 'running', 'done')),
    answered_by TEXT,
    answered BIGINT,
    runner TEXT,
    result TEXT
);
CREATE INDEX approvals_pending ON approvals (status, id);
