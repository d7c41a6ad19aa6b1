-- toolgate store, PostgreSQL schema version 1: every store trait.
-- Times are milliseconds since the Unix epoch (BIGINT); JSON payloads are
-- TEXT, given back byte for byte as they were written (jsonb would
-- reorder keys). Statuses are checked, so that another writer cannot store
-- a value the readers do not know.

-- Accent-insensitive text search (`cafe` finds `Café`): the `unaccent`
-- extension (PostgreSQL's contrib, a trusted extension: the database owner
-- may create it) in two configurations, plain words for notes and English
-- stems for memory.
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH CONFIGURATION toolgate_simple (COPY = pg_catalog.simple);
ALTER TEXT SEARCH CONFIGURATION toolgate_simple
    ALTER MAPPING FOR hword, hword_part, word WITH unaccent, simple;
CREATE TEXT SEARCH CONFIGURATION toolgate_english (COPY = pg_catalog.english);
ALTER TEXT SEARCH CONFIGURATION toolgate_english
    ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;

-- The last stamp given per table whose `updated` must be unique and
-- increasing (see postgres.rs, `stamp`): the row lock orders the writers.
CREATE TABLE store_clock (
    name TEXT PRIMARY KEY,
    last BIGINT NOT NULL
);
INSERT INTO store_clock (name, last) VALUES ('sessions', 0), ('notes', 0), ('projects', 0);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    agent TEXT NOT NULL,
    task TEXT NOT NULL,
    outcome TEXT NOT NULL,
    pid BIGINT,
    runs BIGINT NOT NULL
);
CREATE INDEX sessions_updated ON sessions (updated);
CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    role TEXT,
    json TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE steps (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run BIGINT NOT NULL,
    step BIGINT NOT NULL,
    recorded BIGINT,
    input_tokens BIGINT,
    output_tokens BIGINT,
    estimated BOOLEAN,
    cost_usd DOUBLE PRECISION
);
CREATE INDEX steps_session ON steps (session_id, run, step);
CREATE TABLE tool_calls (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run BIGINT NOT NULL,
    step BIGINT NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    decision TEXT NOT NULL,
    success BOOLEAN NOT NULL,
    duration_ms BIGINT NOT NULL,
    output TEXT NOT NULL,
    effects TEXT NOT NULL,
    recovered BOOLEAN NOT NULL
);
CREATE INDEX tool_calls_session ON tool_calls (session_id, id);
CREATE TABLE session_events (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run BIGINT NOT NULL,
    step BIGINT NOT NULL,
    at BIGINT NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX session_events_session ON session_events (session_id, id);

-- The gate's audit trail; `id` is the order of appending.
CREATE TABLE audit (
    id BIGSERIAL PRIMARY KEY,
    ts TEXT NOT NULL,
    call_id TEXT NOT NULL,
    session_id TEXT,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    decision TEXT NOT NULL,
    success BOOLEAN NOT NULL,
    duration_us BIGINT NOT NULL,
    error TEXT,
    effects TEXT NOT NULL
);
CREATE INDEX audit_session ON audit (session_id, id);
CREATE INDEX audit_tool ON audit (tool, id);

-- The memory index: sources with their feeder's fingerprint, and their
-- chunks with a generated tsvector under a GIN index; `len` is the
-- chunk's number of words, for BM25's length normalisation.
CREATE TABLE memory_sources (
    id BIGSERIAL PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    indexed BIGINT NOT NULL,
    UNIQUE (kind, name)
);
CREATE TABLE memory_chunks (
    id BIGSERIAL PRIMARY KEY,
    source BIGINT NOT NULL REFERENCES memory_sources (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    len BIGINT NOT NULL,
    text TEXT NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('toolgate_english', text)) STORED
);
CREATE INDEX memory_chunks_source ON memory_chunks (source);
CREATE INDEX memory_chunks_tsv ON memory_chunks USING GIN (tsv);

-- Notes; the title weighs A, the body D (ts_rank's weights 1.0 and 0.1:
-- a title match counts ten times a body match).
CREATE TABLE notes (
    id BIGSERIAL PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('toolgate_simple', title), 'A')
        || setweight(to_tsvector('toolgate_simple', body), 'D')) STORED
);
CREATE INDEX notes_updated ON notes (updated);
CREATE INDEX notes_tsv ON notes USING GIN (tsv);

-- Projects (names unique regardless of case), tasks, the activity log,
-- and each session's plan.
CREATE TABLE projects (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'done', 'archived')),
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
CREATE UNIQUE INDEX projects_name ON projects (lower(name));
CREATE TABLE tasks (
    id BIGSERIAL PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('todo', 'in_progress', 'done', 'blocked')),
    priority TEXT NOT NULL CHECK (priority IN ('low', 'medium', 'high')),
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
CREATE INDEX tasks_project ON tasks (project_id, status);
CREATE TABLE project_activity (
    id BIGSERIAL PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id BIGINT,
    at BIGINT NOT NULL,
    action TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX project_activity_project ON project_activity (project_id, id);
CREATE TABLE session_plans (
    session_id TEXT PRIMARY KEY,
    plan TEXT NOT NULL,
    updated BIGINT NOT NULL
);

-- Scheduled jobs and their runs (kept after their job is removed).
CREATE TABLE schedule_jobs (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    schedule TEXT NOT NULL,
    task TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    delete_after_run BOOLEAN NOT NULL,
    session_id TEXT,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    next_run BIGINT,
    lease_owner TEXT,
    lease_until BIGINT NOT NULL DEFAULT 0,
    last_run BIGINT,
    last_outcome TEXT,
    runs BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX schedule_jobs_due ON schedule_jobs (next_run) WHERE enabled;
CREATE TABLE schedule_runs (
    id BIGSERIAL PRIMARY KEY,
    job_id BIGINT NOT NULL,
    job_name TEXT NOT NULL,
    owner TEXT NOT NULL,
    scheduled BIGINT NOT NULL,
    started BIGINT NOT NULL,
    ended BIGINT,
    outcome TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT ''
);
CREATE INDEX schedule_runs_job ON schedule_runs (job_id, id);

-- Dynamic tools, pending until a person reviews them; a name is unique
-- among the tools that are not rejected.
CREATE TABLE dynamic_tools (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('command', 'script')),
    interpreter TEXT,
    source TEXT NOT NULL,
    parameters TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('agent', 'global')),
    created_by TEXT NOT NULL,
    session_id TEXT,
    advice TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
CREATE UNIQUE INDEX dynamic_tools_live_name ON dynamic_tools (name) WHERE status <> 'rejected';
CREATE INDEX dynamic_tools_status ON dynamic_tools (status, id);

-- Checkpoints: what each step changed in the workspace, and the rewinds.
CREATE TABLE checkpoints (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    step BIGINT NOT NULL,
    run BIGINT NOT NULL,
    run_step BIGINT NOT NULL,
    recorded BIGINT NOT NULL,
    messages_from BIGINT NOT NULL,
    changes TEXT NOT NULL,
    incomplete TEXT,
    rewound_by BIGINT,
    PRIMARY KEY (session_id, step)
);
CREATE INDEX checkpoints_recorded ON checkpoints (recorded);
CREATE TABLE rewinds (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    to_step BIGINT NOT NULL,
    created BIGINT NOT NULL,
    code BOOLEAN NOT NULL,
    conversation BOOLEAN NOT NULL,
    changes TEXT NOT NULL,
    messages TEXT NOT NULL,
    undone BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX rewinds_session ON rewinds (session_id, id);
