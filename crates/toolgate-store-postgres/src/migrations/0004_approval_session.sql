-- toolgate store, PostgreSQL: whether an approval's answer allows the tool
-- for the rest of the asking client's session ("allow for the session",
-- answered from any worker). Numbered 0004: 0003 is the audit's `client`
-- column; the two touch different tables and apply in either order.
ALTER TABLE approvals ADD COLUMN for_session BOOLEAN NOT NULL DEFAULT FALSE;
