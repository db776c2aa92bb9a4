//! A job's personas as stored once per job (`job_personas`, migration 0008):
//! each persona its items use, with its attributes, which `stats --by` reads
//! strata from. Conversations keep only the persona id.

use std::collections::BTreeMap;

use serde::Serialize;

/// One persona of a job and its attributes (attribute name → JSON value).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobPersona {
    pub persona_id: String,
    pub attributes: BTreeMap<String, serde_json::Value>,
}
