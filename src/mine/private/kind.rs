//! The kinds of private value `--private` names (docs/mining.md lists what
//! each replaces).

/// A kind of private value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrivateKind {
    Email,
    Phone,
    /// Record ids: order, reservation, user and other ids.
    Id,
    /// Payment-method ids of any prefix (`paypal_1234567`).
    Payment,
    /// Card numbers in any grouping, security codes, expiry dates.
    Card,
    /// API keys and tokens.
    Secret,
    /// Passwords, passcodes and PINs given in a conversation.
    Password,
    Ssn,
    Iban,
    Ip,
    Zip,
    Name,
    /// Street addresses (number and street, unit numbers).
    Address,
    /// Dates of birth.
    Dob,
}

impl PrivateKind {
    pub const ALL: [PrivateKind; 14] = [
        PrivateKind::Email,
        PrivateKind::Phone,
        PrivateKind::Id,
        PrivateKind::Payment,
        PrivateKind::Card,
        PrivateKind::Secret,
        PrivateKind::Password,
        PrivateKind::Ssn,
        PrivateKind::Iban,
        PrivateKind::Ip,
        PrivateKind::Zip,
        PrivateKind::Name,
        PrivateKind::Address,
        PrivateKind::Dob,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PrivateKind::Email => "email",
            PrivateKind::Phone => "phone",
            PrivateKind::Id => "id",
            PrivateKind::Payment => "payment",
            PrivateKind::Card => "card",
            PrivateKind::Secret => "secret",
            PrivateKind::Password => "password",
            PrivateKind::Ssn => "ssn",
            PrivateKind::Iban => "iban",
            PrivateKind::Ip => "ip",
            PrivateKind::Zip => "zip",
            PrivateKind::Name => "name",
            PrivateKind::Address => "address",
            PrivateKind::Dob => "dob",
        }
    }

    pub fn parse(name: &str) -> Option<PrivateKind> {
        PrivateKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Every kind's name, comma-separated (for messages).
    pub fn names() -> String {
        PrivateKind::ALL.map(PrivateKind::as_str).join(", ")
    }
}
