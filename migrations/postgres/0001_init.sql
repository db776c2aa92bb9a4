-- usersim schema, PostgreSQL dialect.
--
-- The same tables, columns, unique constraints and indexes as
-- migrations/sqlite/0001_init.sql; only the id columns are spelled
-- differently (BIGINT GENERATED ALWAYS AS IDENTITY here, the rowid there).
-- Times are unix milliseconds, JSON values are TEXT (as in SQLite, so both
-- backends decode rows the same way), statuses are lower-case words the Rust
-- code parses.

CREATE TABLE jobs (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL,
    -- `generation`, later `judging`
    kind TEXT NOT NULL,
    -- the config exactly as loaded (TOML text)
    config_snapshot TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    -- pending | running | done | failed | cancelled
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX jobs_config_hash ON jobs (config_hash);

CREATE TABLE items (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id BIGINT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    -- `scenario/persona/sample`, unique within the job
    key TEXT NOT NULL,
    scenario_id TEXT NOT NULL,
    persona_id TEXT NOT NULL,
    sample BIGINT NOT NULL,
    -- a u64 stored bit-for-bit
    seed BIGINT NOT NULL,
    -- pending | leased | done | failed
    status TEXT NOT NULL DEFAULT 'pending',
    attempts BIGINT NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires_at BIGINT,
    -- `class: message` of the last failure
    last_error TEXT,
    updated_at BIGINT NOT NULL,
    UNIQUE (job_id, key)
);

-- SQLite's (job_id, status) index holds the rowid, so it is sorted by id
-- within a status; here the id is spelled out to keep that order.
CREATE INDEX items_job_status ON items (job_id, status, id);

-- Leasing locks a job's open items in id order while it scans them
-- (FOR UPDATE SKIP LOCKED), so it cannot merge two ordered ranges of the index
-- above the way SQLite's UNION ALL does. This index holds only the open items,
-- in id order: a lease reads the live leases and then the first pending ones,
-- never the done ones, however far the job has come.
CREATE INDEX items_open ON items (job_id, id) WHERE status IN ('pending', 'leased');

CREATE TABLE conversations (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id BIGINT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    -- UNIQUE: an item is stored at most once, whatever the caller does
    item_id BIGINT NOT NULL UNIQUE REFERENCES items (id) ON DELETE CASCADE,
    item_key TEXT NOT NULL,
    scenario_id TEXT NOT NULL,
    persona_id TEXT NOT NULL,
    sample BIGINT NOT NULL,
    seed BIGINT NOT NULL,
    policy_model TEXT NOT NULL,
    user_model TEXT NOT NULL,
    termination TEXT NOT NULL,
    reward DOUBLE PRECISION,
    -- JSON object, or `null` when not verified
    reward_breakdown TEXT NOT NULL,
    -- JSON object
    metadata TEXT NOT NULL,
    -- JSON array of tool specs offered to the policy
    tools TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT NOT NULL
);

CREATE INDEX conversations_job ON conversations (job_id, id);

CREATE TABLE messages (
    conversation_id BIGINT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    -- position in the conversation, from 0
    idx BIGINT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    -- JSON array of {id, name, arguments}, or NULL
    tool_calls TEXT,
    tool_call_id TEXT,
    author TEXT NOT NULL,
    prompt_tokens BIGINT,
    completion_tokens BIGINT,
    latency_ms BIGINT,
    PRIMARY KEY (conversation_id, idx)
);

CREATE TABLE conversation_usage (
    conversation_id BIGINT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    -- policy | user | judge
    role TEXT NOT NULL,
    calls BIGINT NOT NULL,
    prompt_tokens BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    latency_ms BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, role)
);
