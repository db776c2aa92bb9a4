//! Job configuration: the TOML as written (`file`), the validated job (`job`),
//! loading with every problem reported (`load`), and the `Problem` type.

pub mod file;
pub mod job;
pub mod load;
pub mod problem;

pub use job::{EndpointConfig, Job, Opener, Target};
pub use load::load;
pub use problem::Problem;
