-- toolgate store, PostgreSQL: the id a runner's gate gave a keyed call, so
-- that a retry after the runner died can find (or write) its audit entry.
ALTER TABLE approvals ADD COLUMN call_id TEXT;
