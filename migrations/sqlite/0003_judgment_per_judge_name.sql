-- A judgment belongs to its judge's name. Two judges with the same
-- configuration but different names (`preference`, `pref_biased`) share one
-- hash: keyed by hash alone, they shared one judgment row, stored under
-- whichever name wrote last, and the other judge ended with none. Calls stay
-- keyed by hash: the same prompt to the same model is made once and shared.
DROP INDEX judgments_key;
CREATE UNIQUE INDEX judgments_key
    ON judgments (conversation_a, judge_name, judge_hash, COALESCE(conversation_b, 0));
