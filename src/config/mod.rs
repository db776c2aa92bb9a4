//! Job configuration: the TOML as written (`file`), the validated job (`job`),
//! loading with every problem reported (`load`), and the `Problem` type.

pub mod file;
pub mod job;
pub mod load;
pub mod problem;

pub use job::{
    CircuitBreakerConfig, EndpointConfig, Job, MockConfig, MockFault, Opener, Prices, Target,
};
pub use load::load;
pub use problem::Problem;
