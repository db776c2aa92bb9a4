//! Job configuration: the TOML as written (`file`), the validated job (`job`),
//! and loading with every problem reported (`load`), as a `Problem` of
//! `crate::diagnostics`.

pub mod api;
pub mod azure;
pub mod dedup;
pub mod endpoint;
pub mod endpoint_file;
pub mod environment;
pub mod environment_name;
pub mod environment_table;
pub mod file;
pub mod job;
pub mod load;
pub mod mcp;
pub mod missing_tool;
pub mod paths;
pub mod persona_table;
pub mod policy;
pub mod ranges;
pub mod service;
pub mod state_calls;
pub mod synth;
pub mod tables;
pub mod trust;
pub mod verify;

pub use crate::diagnostics::Problem;
pub use crate::egress::EgressAllowlist;
pub use job::{
    Api, AzureDeployment, BatchSettings, CircuitBreakerConfig, DatasetFormat, EndpointConfig,
    EnvironmentConfig, Job, MissingTool, MockConfig, MockFault, NemoGymConfig, Opener, Prices,
    SimulatedConfig, Target, UserMode,
};
pub use load::load;
pub use mcp::{McpConfig, McpTransport};
pub use trust::{Boundary, OperatorEndpoints, Trust};

#[cfg(test)]
mod snapshot_golden;
