//! Which of an answer's trace records are new. Some agents report only what
//! they did this turn; others report the whole conversation's tool use on
//! every turn (a LangGraph thread's `/runs/wait` answers with all of the
//! thread's messages). A trace that begins with exactly the records already
//! stored, in order, repeats them, and only what follows is new; any other
//! trace is all new. Records are told apart by their call id, tool name,
//! arguments and output together, so an agent that numbers its calls anew
//! each turn (`call_0` every time) is not taken for one that repeats itself
//! unless it makes the very same calls with the very same results.

use crate::sim::policy::AgentToolRecord;

/// What identifies a record across turns.
fn key(record: &AgentToolRecord) -> String {
    // Fields joined by a separator no JSON text or id holds unescaped.
    format!(
        "{}\u{0}{}\u{0}{}\u{0}{}",
        record.call.id, record.call.name, record.call.arguments, record.output
    )
}

/// The records of `trace` not stored yet, given the keys of those stored
/// before (`seen`, extended with the new ones).
pub fn unseen(seen: &mut Vec<String>, trace: Vec<AgentToolRecord>) -> Vec<AgentToolRecord> {
    let keys: Vec<String> = trace.iter().map(key).collect();
    let repeats = !seen.is_empty() && keys.len() >= seen.len() && keys[..seen.len()] == seen[..];
    let skip = if repeats { seen.len() } else { 0 };
    seen.extend(keys.into_iter().skip(skip));
    trace.into_iter().skip(skip).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::ToolCall;

    fn record(id: &str, name: &str, output: &str) -> AgentToolRecord {
        AgentToolRecord {
            call: ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: "{}".into(),
            },
            output: output.into(),
        }
    }

    fn ids(records: &[AgentToolRecord]) -> Vec<&str> {
        records.iter().map(|r| r.call.id.as_str()).collect()
    }

    #[test]
    fn a_trace_of_the_whole_thread_stores_each_call_once() {
        let mut seen = Vec::new();
        let first = unseen(&mut seen, vec![record("a", "get", "1")]);
        assert_eq!(ids(&first), ["a"]);
        let second = unseen(
            &mut seen,
            vec![
                record("a", "get", "1"),
                record("b", "put", "2"),
                record("c", "get", "3"),
            ],
        );
        assert_eq!(ids(&second), ["b", "c"]);
        let third = unseen(
            &mut seen,
            vec![
                record("a", "get", "1"),
                record("b", "put", "2"),
                record("c", "get", "3"),
            ],
        );
        assert!(third.is_empty());
        assert_eq!(seen.len(), 3);
    }

    #[test]
    fn a_trace_of_this_turn_only_is_all_new_even_with_ids_used_again() {
        let mut seen = Vec::new();
        assert_eq!(
            ids(&unseen(&mut seen, vec![record("call_0", "get", "1")])),
            ["call_0"]
        );
        let next = unseen(
            &mut seen,
            vec![record("call_0", "put", "ok"), record("call_1", "get", "1")],
        );
        assert_eq!(ids(&next), ["call_0", "call_1"]);
        assert!(unseen(&mut seen, Vec::new()).is_empty());
        assert_eq!(seen.len(), 3);
    }
}
