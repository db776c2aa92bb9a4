-- Scenario synthesis (usersim synthesize): one row per proposal of a
-- synthesis job, written with its item marked done in one transaction. A
-- proposal is what one generator prompt became after its feedback retries:
-- `valid` (its last attempt passed every check of its item: validation by
-- execution, the brief, the review committee) or `rejected` (the stage and
-- reason of its last attempt). Near-duplicates are decided across proposals
-- in index order when the accepted scenarios are read, so they are not stored
-- here. The other dialect's file (migrations/postgres/) is the same but for the
-- id column; JSON is TEXT in both.
CREATE TABLE proposals (
    id INTEGER PRIMARY KEY,
    job_id BIGINT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    item_id BIGINT NOT NULL UNIQUE REFERENCES items (id) ON DELETE CASCADE,
    -- the proposal number: the item's index in the job
    idx BIGINT NOT NULL,
    -- valid | rejected
    status TEXT NOT NULL,
    -- the last attempt's rejection (rejected proposals)
    stage TEXT,
    reason TEXT,
    -- what the proposal was asked to be (JSON ProposalBrief)
    brief TEXT NOT NULL,
    -- the scenario row (JSON), for valid proposals
    scenario TEXT,
    -- every attempt: reply, rejection, review (JSON array)
    attempts TEXT NOT NULL,
    -- generator and reviewer tokens over every attempt
    prompt_tokens BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    review_prompt_tokens BIGINT NOT NULL,
    review_completion_tokens BIGINT NOT NULL,
    -- wall time of the proposal's work, milliseconds
    latency_ms BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (job_id, idx)
);
