-- toolgate store, PostgreSQL: saved confirmation rules (rules.rs), shared
-- by every worker of the store.
CREATE TABLE rules (
    id BIGSERIAL PRIMARY KEY,
    rule TEXT NOT NULL,
    saved_by TEXT NOT NULL,
    saved BIGINT NOT NULL
);
