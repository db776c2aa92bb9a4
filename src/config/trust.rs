//! How far a config's author is trusted, and what a submitted config may
//! reach: types every table's reader takes. `service` builds them; this file
//! imports none of its folder's logic.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::endpoint_file::EndpointFile;
use crate::egress::EgressAllowlist;

/// How far a config's author is trusted.
#[derive(Debug, Clone, Copy)]
pub enum Trust<'a> {
    /// The user's own files, or a job stored by sparring: any path, keys from
    /// this process's environment.
    Local,
    /// A config submitted to the service.
    Submitted(&'a Boundary),
}

/// What a submitted config may reach.
#[derive(Debug, Clone)]
pub struct Boundary {
    /// Canonical (symlinks resolved).
    pub(super) data_root: PathBuf,
    pub operators: OperatorEndpoints,
    /// The URLs a submitted config may name (`serve --allow-url`); empty: any.
    pub egress: EgressAllowlist,
}

/// The service's operator endpoints, by name.
#[derive(Debug, Clone, Default)]
pub struct OperatorEndpoints {
    pub(super) endpoints: BTreeMap<String, EndpointFile>,
}
