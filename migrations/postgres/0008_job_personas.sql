-- Populations (issue 30): each persona a job's items use, once per job, with
-- its attributes (a persona table's columns, or a hand-written persona's own
-- `attributes`). Conversations keep only the persona id; `usersim stats --by
-- ATTRIBUTE` reads the strata from here. Written when the job's items are
-- stored, again (changing nothing) when the job is submitted again or an
-- agent server opens it.
-- The other dialect's file is the same.
CREATE TABLE job_personas (
    job_id BIGINT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    persona_id TEXT NOT NULL,
    -- JSON object: attribute name → value
    attributes TEXT NOT NULL,
    PRIMARY KEY (job_id, persona_id)
);
