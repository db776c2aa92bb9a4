//! What a mock model name asks for: a base role and fault modifiers.

/// The scripted role a mock model plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockRole {
    Policy,
    User,
    Judge,
    /// Plays a `simulated` environment's tools.
    Tools,
    /// Proposes scenarios from a synthesis prompt.
    Synth,
    /// Turns a conversation into a scenario and a persona (`sparring mine`).
    Miner,
}

/// Fault and behaviour modifiers, written after `+` in the model name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// First request for this model name gets 429 with `Retry-After: 1`.
    pub ratelimit_once: bool,
    /// First request for this model name gets a 500.
    pub error500_once: bool,
    /// Every response is a 200 with a truncated, unparseable JSON body.
    pub malformed: bool,
    /// Policy: the first tool call has arguments that are not JSON.
    pub clumsy: bool,
    /// Every message is empty (user and policy).
    pub empty: bool,
    /// User: never says the stop token.
    pub nonstop: bool,
    /// Policy: never flawed (always replays the gold actions correctly).
    pub perfect: bool,
    /// Policy: always flawed (replaying a dataset row: the last call left out,
    /// or an unsure answer), so a verifier gives it 0.
    pub wrong: bool,
    /// User: keeps talking after the stop token, as small real models do.
    pub stop_midtext: bool,
    /// Every response takes 2 s (slower than a tight client timeout).
    pub slow: bool,
    /// Judge: a pairwise judge that always prefers whichever answer is shown
    /// first (position bias), so a swap check turns its verdicts into ties.
    pub biased: bool,
    /// Judge: every reply is a 200 with text that has no label to parse.
    pub garbled: bool,
    /// Judge: the first request for this model name gets a garbled reply.
    pub garbled_once: bool,
    /// User: never calls the user tools it is offered (dual control), even
    /// when the agent asks it to.
    pub no_tools: bool,
    /// Tools: a repeated read contradicts its earlier result on about half
    /// the seeds, in the first answer only.
    pub contradict: bool,
    /// Tools: a repeated read always contradicts, retry or not.
    pub contradict_always: bool,
    /// Tools: a result breaks the output schema on about half the seeds, in
    /// the first answer only.
    pub bad_output: bool,
    /// The usage reported, in percent of what the mock counts: 300 with
    /// `+overreport`, 25 with `+underreport` (for the token limits' tests).
    pub usage_percent: u32,
    /// User: on some seeds, stops as soon as the agent asks a question or
    /// to confirm an action, before it acted (`premature_stop`).
    pub premature: bool,
    /// User: on some seeds, speaks the agent's lines (`role_confusion`).
    pub assistantish: bool,
    /// User: on some seeds, says its hidden instructions (`instruction_leak`).
    pub leaky: bool,
    /// User: on some seeds, makes up an order number (`invented_fact`).
    pub inventive: bool,
    /// Responses API: each reply starts with a reasoning item, which later
    /// requests must send back (see `mock_llm::responses`).
    pub reasoning: bool,
    /// Responses API: the reply's last output item carries token fields.
    pub tokens: bool,
}

impl Modifiers {
    /// `tokens` as this model reports them.
    pub fn reported(&self, tokens: usize) -> usize {
        match self.usage_percent {
            0 => tokens,
            p => tokens * p as usize / 100,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Behaviour {
    pub role: MockRole,
    pub modifiers: Modifiers,
}

pub const MODELS: &[&str] = &[
    "mock-policy",
    "mock-user",
    "mock-judge",
    "mock-tools",
    "mock-synth",
    "mock-miner",
];

impl Behaviour {
    /// Parse `mock-policy+clumsy+ratelimit-once`. Unknown names or modifiers are
    /// an error the server returns as a 404, like a real server's unknown model.
    pub fn parse(model: &str) -> Result<Behaviour, String> {
        let mut parts = model.split('+');
        let base = parts.next().unwrap_or_default();
        let role = match base {
            "mock-policy" => MockRole::Policy,
            "mock-user" => MockRole::User,
            "mock-judge" => MockRole::Judge,
            "mock-tools" => MockRole::Tools,
            "mock-synth" => MockRole::Synth,
            "mock-miner" => MockRole::Miner,
            other => {
                return Err(format!(
                    "model '{other}' does not exist; the mock serves {}",
                    MODELS.join(", ")
                ))
            }
        };
        let mut m = Modifiers::default();
        for modifier in parts {
            match modifier {
                "ratelimit-once" => m.ratelimit_once = true,
                "error500-once" => m.error500_once = true,
                "malformed" => m.malformed = true,
                "clumsy" => m.clumsy = true,
                "empty" => m.empty = true,
                "nonstop" => m.nonstop = true,
                "perfect" => m.perfect = true,
                "wrong" => m.wrong = true,
                "stop-midtext" => m.stop_midtext = true,
                "overreport" => m.usage_percent = 300,
                "underreport" => m.usage_percent = 25,
                "slow" => m.slow = true,
                "biased" => m.biased = true,
                "garbled" => m.garbled = true,
                "garbled-once" => m.garbled_once = true,
                "no-tools" => m.no_tools = true,
                "contradict" => m.contradict = true,
                "contradict-always" => m.contradict_always = true,
                "bad-output" => m.bad_output = true,
                "premature" => m.premature = true,
                "assistantish" => m.assistantish = true,
                "leaky" => m.leaky = true,
                "inventive" => m.inventive = true,
                "reasoning" => m.reasoning = true,
                "tokens" => m.tokens = true,
                other => {
                    return Err(format!(
                        "unknown mock modifier '+{other}'; known: ratelimit-once, error500-once, malformed, clumsy, empty, nonstop, perfect, wrong, stop-midtext, slow, biased, garbled, garbled-once, no-tools, contradict, contradict-always, bad-output, overreport, underreport, premature, assistantish, leaky, inventive, reasoning, tokens"
                    ))
                }
            }
        }
        Ok(Behaviour { role, modifiers: m })
    }
}

/// A stable 64-bit hash (FNV-1a), so the mock's choices never depend on the
/// standard library's randomised hasher.
pub fn stable_hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_choose_role_and_modifiers() {
        let b = Behaviour::parse("mock-policy+clumsy+ratelimit-once").unwrap();
        assert_eq!(b.role, MockRole::Policy);
        assert!(b.modifiers.clumsy && b.modifiers.ratelimit_once && !b.modifiers.malformed);
        assert!(Behaviour::parse("gpt-4o")
            .unwrap_err()
            .contains("mock-policy"));
        let judge = Behaviour::parse("mock-judge+biased+garbled-once").unwrap();
        assert_eq!(judge.role, MockRole::Judge);
        assert!(judge.modifiers.biased && judge.modifiers.garbled_once && !judge.modifiers.garbled);
        let user = Behaviour::parse("mock-user+premature+assistantish+leaky+inventive").unwrap();
        let m = &user.modifiers;
        assert!(m.premature && m.assistantish && m.leaky && m.inventive && !m.nonstop);
        assert!(Behaviour::parse("mock-user+loud")
            .unwrap_err()
            .contains("+loud"));
    }
}
