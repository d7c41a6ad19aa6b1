-- toolgate store, PostgreSQL: "allow for the session" answers (rules.rs),
-- honoured by every worker of the store until they expire.
CREATE TABLE session_allows (
    scope TEXT NOT NULL,
    tool TEXT NOT NULL,
    sensitivity TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    granted BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    PRIMARY KEY (scope, tool, sensitivity)
);
