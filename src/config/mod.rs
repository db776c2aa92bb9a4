//! Job configuration: types, loading, validation.

pub mod problem;

pub use problem::Problem;
