-- Evaluations (issue 43): one job config run once per policy, the same items
-- for each, so that every comparison is paired. `sparring evaluate` writes
-- the evaluation by its name and each policy's job as that job is run (a
-- resumed evaluation finds the same jobs by their config hashes); the
-- leaderboard reads the policies in their order.
-- The other dialect's file differs only in how `id` is generated.
CREATE TABLE evaluations (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    -- the policy the paired tests compare with (NULL: the first)
    baseline TEXT,
    -- the pairwise judge whose verdicts rate the policies (NULL: none)
    judge TEXT,
    created_at BIGINT NOT NULL
);

CREATE TABLE evaluation_policies (
    evaluation_id BIGINT NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
    policy TEXT NOT NULL,
    -- the policy's place in the evaluation file, from 0
    position BIGINT NOT NULL,
    job_id BIGINT NOT NULL REFERENCES jobs (id),
    PRIMARY KEY (evaluation_id, policy)
);
