-- Judging through a provider's Batch API (src/llm/batch/, src/jobs/judging/batch/).
-- The other dialect's file (migrations/postgres/) is the same but for the id
-- columns and booleans.
--
-- A batch row is written, with its requests, before anything is sent; the
-- provider's ids are written as soon as they exist, so a restarted job polls
-- the batches it created instead of submitting their requests again.
CREATE TABLE batches (
    id INTEGER PRIMARY KEY,
    job_id BIGINT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    -- the endpoint's name in the judges' config
    endpoint TEXT NOT NULL,
    input_file_id TEXT,
    batch_id TEXT,
    output_file_id TEXT,
    error_file_id TEXT,
    -- preparing (nothing sent yet), the provider's status (validating,
    -- in_progress, finalizing, completed, failed, expired, cancelling,
    -- cancelled), or ingested (its answers are stored)
    status TEXT NOT NULL,
    requests BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX batches_job ON batches (job_id, status);

-- One judge call sent in a batch. custom_id names the call and its attempt
-- (judge hash, conversations, order, sample, prompt, attempt): an id is
-- never sent twice.
CREATE TABLE batch_requests (
    id INTEGER PRIMARY KEY,
    batch BIGINT NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
    job_id BIGINT NOT NULL,
    custom_id TEXT NOT NULL,
    judge_name TEXT NOT NULL,
    judge_hash TEXT NOT NULL,
    conversation_a BIGINT NOT NULL,
    conversation_b BIGINT,
    ord TEXT NOT NULL,
    sample BIGINT NOT NULL,
    prompt_hash TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    -- submitted | answered | failed (an error line, a non-200 status, or no
    -- answer from an expired, failed or cancelled batch)
    status TEXT NOT NULL,
    error TEXT,
    UNIQUE (job_id, custom_id)
);
CREATE INDEX batch_requests_batch ON batch_requests (batch);

-- Whether a call was answered through a batch (priced at the batch prices).
ALTER TABLE judge_calls ADD COLUMN batch BOOLEAN NOT NULL DEFAULT 0 CHECK (batch IN (0, 1));
