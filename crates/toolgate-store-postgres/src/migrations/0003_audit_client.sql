-- toolgate store, PostgreSQL schema version 3: the audit names the client
-- that made a call (a named client of `mcp.http.clients`); NULL for calls
-- of nobody in particular.
ALTER TABLE audit ADD COLUMN client TEXT;
