-- toolgate store, PostgreSQL: each client's request budget
-- (`rate_per_minute`, limits.rs), shared by every worker of the store.
CREATE TABLE client_buckets (
    client TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    at BIGINT NOT NULL,
    taken BOOLEAN NOT NULL
);
