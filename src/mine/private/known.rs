//! What a conversation itself says is private: the values of its records'
//! own fields (a tool result's `user_id`, `reservations`, `first_name`,
//! `dob`, `zip`, `payment_methods`; the same in the tool calls' arguments
//! and in the imported file's metadata, such as the scenario the user was
//! given) and the values its text gives after a cue ("my reservation number
//! is XEWRD9", "I'm Chen Lee"). Each is learned as a known value of the run,
//! replaced wherever it stands, even bare, even where no pattern would
//! find it. A name found after a cue is kept only when it does not look like
//! an ordinary word (the conversation writes it in lower case, or it is a
//! common capitalised word).

use std::collections::HashSet;

use serde_json::Value;

use crate::store::StoredConversation;

use super::kind::PrivateKind;
use super::patterns::Compiled;
use super::{dates, fake};

/// Keys (lower case, without `_`, `-` and spaces) whose values are a kind.
const KEYS: &[(PrivateKind, &[&str])] = &[
    (
        PrivateKind::Name,
        &[
            "firstname",
            "lastname",
            "middlename",
            "fullname",
            "givenname",
            "familyname",
            "surname",
            "customername",
            "passengername",
            "cardholdername",
            "cardholder",
            "holdername",
            "contactname",
        ],
    ),
    (
        PrivateKind::Dob,
        &["dob", "dateofbirth", "birthdate", "birthday", "birthdt"],
    ),
    (
        PrivateKind::Address,
        &[
            "address",
            "address1",
            "address2",
            "addressline1",
            "addressline2",
            "street",
            "street1",
            "street2",
            "streetaddress",
            "line1",
            "line2",
        ],
    ),
    (
        PrivateKind::Zip,
        &["zip", "zipcode", "postalcode", "postcode"],
    ),
    (PrivateKind::Email, &["email", "emailaddress", "mail"]),
    (
        PrivateKind::Phone,
        &[
            "phone",
            "phonenumber",
            "mobile",
            "mobilenumber",
            "telephone",
            "tel",
            "cell",
            "cellphone",
            "contactnumber",
        ],
    ),
    (
        PrivateKind::Card,
        &[
            "cardnumber",
            "ccnumber",
            "creditcardnumber",
            "pan",
            "cvv",
            "cvc",
            "securitycode",
        ],
    ),
    (
        PrivateKind::Secret,
        &[
            "apikey",
            "accesstoken",
            "refreshtoken",
            "authtoken",
            "bearertoken",
            "token",
            "secret",
            "secretkey",
            "clientsecret",
            "privatekey",
        ],
    ),
    (
        PrivateKind::Password,
        &["password", "passcode", "passphrase", "pin", "pincode"],
    ),
    (PrivateKind::Ssn, &["ssn", "socialsecuritynumber"]),
    (PrivateKind::Iban, &["iban"]),
    (
        PrivateKind::Ip,
        &["ip", "ipaddress", "clientip", "remoteaddr"],
    ),
    (
        PrivateKind::Payment,
        &[
            "paymentid",
            "paymentmethodid",
            "paymentmethod",
            "paymentsource",
        ],
    ),
    (
        PrivateKind::Id,
        &[
            "reservations",
            "orders",
            "reservationnumber",
            "ordernumber",
            "confirmationnumber",
            "confirmationcode",
            "bookingreference",
            "bookingnumber",
            "recordlocator",
            "pnr",
            "accountnumber",
            "trackingnumber",
            "membershipnumber",
            "customernumber",
            "ticketnumber",
            "casenumber",
            "loyaltynumber",
            "username",
        ],
    ),
];

/// Objects keyed by payment-method id (`{"paypal_1234567": {...}}`).
const PAYMENT_CONTAINERS: &[&str] = &["paymentmethods", "paymentsources", "wallet"];

/// Id fields that name a step of the run, not a record of the person.
const NOT_RECORD_IDS: &[&str] = &[
    "taskid",
    "toolcallid",
    "callid",
    "messageid",
    "requestid",
    "responseid",
    "runid",
    "traceid",
    "spanid",
    "actionid",
    "modelid",
];

/// Keys that make an object a person's record, so its `name` is a name.
const PERSON_KEYS: &[&str] = &[
    "email",
    "dob",
    "dateofbirth",
    "firstname",
    "lastname",
    "userid",
    "customerid",
    "phone",
    "phonenumber",
    "address",
    "membership",
    "paymentmethods",
];

/// Capitalised words that start sentences or name things, never learned as
/// a name from a cue (a record's name is learned whatever it is).
const NOT_NAMES: &[&str] = &[
    "I",
    "The",
    "A",
    "An",
    "And",
    "But",
    "Or",
    "So",
    "Not",
    "Just",
    "Also",
    "Here",
    "There",
    "Thanks",
    "Thank",
    "Please",
    "Yes",
    "No",
    "Hi",
    "Hello",
    "Hey",
    "Sorry",
    "Sure",
    "Okay",
    "OK",
    "Still",
    "Very",
    "Really",
    "Now",
    "Then",
    "Today",
    "Tomorrow",
    "Yesterday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Gold",
    "Silver",
    "Bronze",
    "Platinum",
    "Regular",
    "Basic",
    "Economy",
    "Business",
    "First",
    "Premium",
    "Class",
    "Member",
    "Customer",
    "Agent",
    "Support",
    "Service",
    "Mr",
    "Mrs",
    "Ms",
    "Dr",
    "Miss",
    "Sir",
    "Madam",
    "Going",
    "Trying",
    "Looking",
    "Calling",
    "Writing",
    "Having",
    "Happy",
    "Glad",
    "Ready",
    "Sure",
    "Fine",
    "Good",
    "Great",
    "What",
    "Who",
    "How",
    "Why",
    "When",
    "Where",
    "Which",
    "My",
    "Your",
    "We",
    "You",
    "It",
    "This",
    "That",
    "They",
    "He",
    "She",
    "All",
    "Any",
    "Each",
    "Every",
    "Both",
    "In",
    "On",
    "At",
    "To",
    "For",
    "From",
    "With",
    "Without",
    "By",
    "About",
    "If",
    "Unfortunately",
    "Actually",
];

/// A value a conversation says is private, and its kind.
pub type Known = (String, PrivateKind);

/// Texts this long are read once a run: the system prompt every
/// conversation of a job repeats gives what it gives the first time.
const LONG_TEXT: usize = 512;

/// Every value `conversation` says is private, of the kinds in `kinds`;
/// `cues` are the patterns with a cue, `read` the long texts read before.
pub fn learn(
    conversation: &StoredConversation,
    cues: &Compiled,
    kinds: &[PrivateKind],
    read: &mut HashSet<u64>,
) -> Vec<Known> {
    let mut learner = Learner {
        patterns: cues,
        kinds,
        found: Vec::new(),
        cued_names: Vec::new(),
        read,
    };
    learner.walk(&conversation.conversation.metadata, None, false);
    for message in &conversation.messages {
        match serde_json::from_str::<Value>(&message.content) {
            Ok(value @ (Value::Object(_) | Value::Array(_))) => learner.walk(&value, None, false),
            _ => learner.text(&message.content),
        }
        if let Some(Value::Array(calls)) = &message.tool_calls {
            for call in calls {
                for arguments in [&call["arguments"], &call["function"]["arguments"]] {
                    learner.walk(arguments, None, false);
                }
            }
        }
    }
    if !learner.cued_names.is_empty() {
        let ordinary = lower_case_words(conversation);
        let cued = std::mem::take(&mut learner.cued_names);
        for name in cued {
            learner.cued_name(&name, &ordinary);
        }
    }
    learner.found
}

struct Learner<'a> {
    patterns: &'a Compiled,
    kinds: &'a [PrivateKind],
    found: Vec<Known>,
    /// Names after a cue, checked once the conversation's words are known.
    cued_names: Vec<String>,
    read: &'a mut HashSet<u64>,
}

impl Learner<'_> {
    fn walk(&mut self, value: &Value, key: Option<&str>, person: bool) {
        match value {
            Value::Object(map) => {
                let person = map.keys().any(|k| PERSON_KEYS.contains(&norm(k).as_str()));
                for (k, v) in map {
                    if let (true, Value::Object(inner)) =
                        (PAYMENT_CONTAINERS.contains(&norm(k).as_str()), v)
                    {
                        for id in inner.keys() {
                            self.value(id, PrivateKind::Payment);
                        }
                    }
                    self.walk(v, Some(k), person);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(item, key, person);
                }
            }
            Value::String(s) => {
                let trimmed = s.trim_start();
                if trimmed.starts_with('{') || trimmed.starts_with('[') {
                    if let Ok(parsed) = serde_json::from_str::<Value>(s) {
                        self.walk(&parsed, key, person);
                        return;
                    }
                }
                match key.and_then(|k| kind_of_key(k, person)) {
                    Some(kind) => self.value(s, kind),
                    None if s.contains(char::is_whitespace) => self.text(s),
                    None => {}
                }
            }
            Value::Number(n) => {
                if let Some(kind) = key.and_then(|k| kind_of_key(k, person)) {
                    self.value(&n.to_string(), kind);
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    /// A free text: the values its cues give. A short one (a unit's
    /// number, a PIN, a security code) is replaced where its cue stands but
    /// not learned: bare, `135` is more often a price than a suite.
    fn text(&mut self, text: &str) {
        if text.len() >= LONG_TEXT {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(text, &mut hasher);
            if !self.read.insert(std::hash::Hasher::finish(&hasher)) {
                return;
            }
        }
        for found in self.patterns.find(text) {
            let (Some(kind), true) = (found.kind, found.cued) else {
                continue;
            };
            let value = &text[found.start..found.end];
            match kind {
                PrivateKind::Name => self.cued_names.push(value.to_string()),
                _ if distinctive(value) => self.value(value, kind),
                _ => {}
            }
        }
    }

    /// A value of a record's field of `kind`. A field that holds something
    /// else (an agent's JSON: `"email": "We emailed y***@example.com"`,
    /// `"address1": "e.g., 123 Main St"`) is read as a free text instead.
    fn value(&mut self, value: &str, kind: PrivateKind) {
        if !self.kinds.contains(&kind) {
            return;
        }
        let value = value.trim();
        let values = field_values(value, kind);
        if values.is_empty() {
            if value.contains(char::is_whitespace) {
                self.text(value);
            }
            return;
        }
        self.found.extend(values.into_iter().map(|v| (v, kind)));
    }

    /// A name after a cue: its leading words that are not ordinary ones,
    /// up to a possessive (`my friend Anika's Diwali party`: `Anika`).
    fn cued_name(&mut self, name: &str, ordinary: &HashSet<String>) {
        for word in name.split_whitespace() {
            let (word, possessive) =
                match word.strip_suffix("'s").or_else(|| word.strip_suffix("’s")) {
                    Some(bare) => (bare, true),
                    None => (word, false),
                };
            if !is_name_word(word)
                || NOT_NAMES.contains(&word)
                || dates::MONTHS.contains(&word)
                || ordinary.contains(&word.to_lowercase())
            {
                return;
            }
            self.found.push((word.to_string(), PrivateKind::Name));
            if possessive {
                return;
            }
        }
    }
}

/// The kind of a field's value, from its key.
fn kind_of_key(key: &str, person: bool) -> Option<PrivateKind> {
    let k = norm(key);
    if k == "name" && person {
        return Some(PrivateKind::Name);
    }
    if let Some((kind, _)) = KEYS.iter().find(|(_, keys)| keys.contains(&k.as_str())) {
        return Some(*kind);
    }
    // A bare `id` is a record's only in a person's record; elsewhere it
    // names a message, a call, a run.
    let id_key = (key == "id" && person)
        || ["_id", "-id", "Id", "ID", "_ids", "Ids", "IDs"]
            .iter()
            .any(|end| key.ends_with(end));
    (id_key && !NOT_RECORD_IDS.contains(&k.as_str())).then_some(PrivateKind::Id)
}

/// A key in lower case without `_`, `-` and spaces.
fn norm(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// An id a record's field holds: one word of 4 to 64 characters with a
/// digit or `_`, or a code in capitals (`TAMSDK`, `COMMUNITY-HALL-A`);
/// numbers of 5 digits or more. An ordinary word (`economy`) or a short
/// number (`13`) is not one.
fn record_id(value: &str) -> bool {
    let n = value.chars().count();
    if !(4..=64).contains(&n) || value.contains(char::is_whitespace) {
        return false;
    }
    if value.chars().all(|c| c.is_ascii_digit()) {
        return n >= 5;
    }
    value.chars().any(|c| c.is_ascii_digit() || c == '_')
        || (n >= 5
            && value.chars().any(|c| c.is_ascii_uppercase())
            && value.chars().all(|c| c.is_ascii_uppercase() || c == '-'))
}

/// What a field of `kind` holding `value` gives to learn: nothing when the
/// value is not one of that kind.
fn field_values(value: &str, kind: PrivateKind) -> Vec<String> {
    let one = |ok: bool| match ok {
        true => vec![value.to_string()],
        false => Vec::new(),
    };
    let n = value.chars().count();
    let digits = value.chars().filter(char::is_ascii_digit).count();
    let spaced = value.contains(char::is_whitespace);
    match kind {
        // A name of one to four words, each learned alone.
        PrivateKind::Name => {
            let words: Vec<&str> = value
                .split(|c: char| c.is_whitespace() || c == ',')
                .map(|w| w.trim_end_matches('.'))
                .filter(|w| !w.is_empty())
                .collect();
            match (1..=4).contains(&words.len()) && words.iter().all(|w| is_name_word(w)) {
                true => words.into_iter().map(str::to_string).collect(),
                false => Vec::new(),
            }
        }
        // A date, in every way one writes it.
        PrivateKind::Dob => match dates::read(value) {
            Some(written) => {
                let mut all = dates::writings(written.day);
                all.push(value.to_string());
                all
            }
            None => one(!spaced && digits > 0),
        },
        PrivateKind::Id | PrivateKind::Payment => one(record_id(value)),
        // A number and a street, a unit (`Suite 243`), or a street and its
        // number (`Hauptstraße 5`).
        PrivateKind::Address => {
            let first = value.split_whitespace().next().unwrap_or_default();
            let last = value.split_whitespace().next_back().unwrap_or_default();
            one(n >= 3
                && digits > 0
                && (first.starts_with(|c: char| c.is_ascii_digit())
                    || fake::UNIT_WORDS.contains(&first.trim_end_matches('.'))
                    || last.chars().all(|c| c.is_ascii_digit())))
        }
        PrivateKind::Zip => one((3..=10).contains(&n) && digits > 0),
        PrivateKind::Phone => {
            one((7..=15).contains(&digits) && n <= 24 && !value.chars().any(char::is_alphabetic))
        }
        PrivateKind::Email => one(!spaced && value.contains('@')),
        PrivateKind::Card
        | PrivateKind::Secret
        | PrivateKind::Password
        | PrivateKind::Ssn
        | PrivateKind::Iban
        | PrivateKind::Ip => one((3..=64).contains(&n)),
    }
}

/// A value a cue gives that is learned, to be replaced where it stands
/// bare: five characters or more, or four with a letter and a digit.
fn distinctive(value: &str) -> bool {
    let n = value.chars().count();
    n >= 5
        || (n == 4
            && value.chars().any(|c| c.is_ascii_digit())
            && value.chars().any(char::is_alphabetic))
}

/// A word that can be a name: a capital, then letters (or `'` and `-`).
fn is_name_word(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase)
        && word.chars().count() >= 2
        && chars.all(|c| c.is_alphabetic() || matches!(c, '\'' | '’' | '-'))
}

/// The words the conversation writes in lower case: ordinary words, which
/// a name found after a cue is not.
fn lower_case_words(conversation: &StoredConversation) -> HashSet<String> {
    let mut words = HashSet::new();
    for message in &conversation.messages {
        for word in message.content.split(|c: char| !c.is_alphabetic()) {
            if word.len() > 1 && word.chars().all(char::is_lowercase) {
                words.insert(word.to_string());
            }
        }
    }
    words
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::judge::transcript::tests::row as message;
    use crate::store::{ConversationRow, MessageRow};

    pub fn conversation(metadata: Value, messages: Vec<MessageRow>) -> StoredConversation {
        StoredConversation {
            conversation: ConversationRow {
                id: 1,
                job_id: 1,
                item_id: 1,
                item_key: "k".into(),
                scenario_id: "s".into(),
                persona_id: String::new(),
                sample: 0,
                seed: 0,
                policy_model: String::new(),
                user_model: String::new(),
                termination: "user_stop".into(),
                reward: None,
                reward_breakdown: Value::Null,
                metadata,
                tools: Value::Null,
                started_at: 0,
                finished_at: 0,
                user_checks: None,
            },
            messages,
            usage: Vec::new(),
        }
    }

    fn learned(c: &StoredConversation) -> Vec<Known> {
        let patterns = Compiled::cues(&PrivateKind::ALL, &[]).unwrap();
        let mut found = learn(c, &patterns, &PrivateKind::ALL, &mut HashSet::new());
        found.sort();
        found.dedup();
        found
    }

    fn has(found: &[Known], value: &str, kind: PrivateKind) -> bool {
        found.iter().any(|(v, k)| v == value && *k == kind)
    }

    #[test]
    fn a_tool_results_record_gives_its_ids_names_address_and_birth_date() {
        let result = serde_json::json!({
            "user_id": "anya_garcia_5901",
            "name": {"first_name": "Anya", "last_name": "Garcia"},
            "address": {"address1": "555 Highland Drive", "address2": "Suite 243",
                        "city": "San Antonio", "zip": "78256"},
            "email": "anya.garcia8816@example.com",
            "dob": "1992-11-12",
            "payment_methods": {"certificate_7583008": {"source": "certificate", "amount": 150.0}},
            "membership": "silver",
            "reservations": ["82K959", "TAMSDK"],
            "flights": [{"flight_number": "HAT255", "origin": "DEN"}]
        });
        let c = conversation(
            serde_json::json!({"task_id": "13"}),
            vec![message("tool", &result.to_string())],
        );
        let found = learned(&c);
        for (value, kind) in [
            ("anya_garcia_5901", PrivateKind::Id),
            ("Anya", PrivateKind::Name),
            ("Garcia", PrivateKind::Name),
            ("555 Highland Drive", PrivateKind::Address),
            ("Suite 243", PrivateKind::Address),
            ("78256", PrivateKind::Zip),
            ("anya.garcia8816@example.com", PrivateKind::Email),
            ("1992-11-12", PrivateKind::Dob),
            ("November 12, 1992", PrivateKind::Dob),
            ("certificate_7583008", PrivateKind::Payment),
            ("82K959", PrivateKind::Id),
            ("TAMSDK", PrivateKind::Id),
        ] {
            assert!(has(&found, value, kind), "{value} not learned: {found:?}");
        }
        for ordinary in [
            "silver",
            "San Antonio",
            "HAT255",
            "DEN",
            "13",
            "certificate",
        ] {
            assert!(!found.iter().any(|(v, _)| v == ordinary), "{ordinary}");
        }
    }

    #[test]
    fn the_scenario_and_the_text_give_values_after_their_cues() {
        let c = conversation(
            serde_json::json!({"scenario": {"known_info":
                "You are Mei Lee.\n\nYour reservation number is XEWRD9"}}),
            vec![
                message("system", "Members are gold or silver. Be happy to help."),
                message(
                    "user",
                    "I'm Gold Member. Book it for myself (Sophia Silva). I'm Happy Gilmore. \
                     I'm going to my friend Anika's Diwali party. Suite 135, PIN: 4471.",
                ),
                message("user", "my password is hunter2!"),
                message(
                    "assistant",
                    r#"{"first_name": "Your first name (if choosing name + ZIP)",
                        "address1": "e.g., 123 Main St",
                        "email": "We emailed it to y***@example.com, your address"}"#,
                ),
            ],
        );
        let found = learned(&c);
        for (value, kind) in [
            ("Mei", PrivateKind::Name),
            ("Lee", PrivateKind::Name),
            ("Sophia", PrivateKind::Name),
            ("Silva", PrivateKind::Name),
            ("XEWRD9", PrivateKind::Id),
            ("hunter2", PrivateKind::Password),
            ("Anika", PrivateKind::Name),
        ] {
            assert!(has(&found, value, kind), "{value} not learned: {found:?}");
        }
        let ordinary = [
            "Gold", "Member", "Happy", "Gilmore", "Diwali", "ZIP", "Your", "135", "4471",
        ];
        for ordinary in ordinary {
            assert!(
                !found.iter().any(|(v, _)| v == ordinary),
                "{ordinary}: {found:?}"
            );
        }
    }
}
