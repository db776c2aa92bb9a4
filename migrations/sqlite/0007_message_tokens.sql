-- Token capture (issue 28): the token ids and log probabilities a policy
-- server returned with a generation (NeMo Gym's TokenIDLogProbMixin), beside
-- the message that generation produced. A table of its own, not columns of
-- `messages`: only policy turns of a server that returns them have a row, and
-- only the exports that pass them through (nemo_gym) read them, so every other
-- reader of messages reads no more than before.
-- The other dialect's file (migrations/postgres/) is the same but for BYTEA.
--
-- Each list is packed little-endian: token ids 4 bytes each (u32), log
-- probabilities 8 bytes each (f64, bit for bit as the server sent them).
CREATE TABLE message_tokens (
    conversation_id BIGINT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    -- the message's idx in `messages`
    idx BIGINT NOT NULL,
    prompt_token_ids BLOB NOT NULL,
    generation_token_ids BLOB NOT NULL,
    generation_log_probs BLOB NOT NULL,
    PRIMARY KEY (conversation_id, idx)
);
