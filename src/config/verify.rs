//! What `sparring verify` reads of a config: its `[environment]` (a NeMo Gym
//! resources server) and, when there is one, its `[dataset]` rows
//! (`format = "nemo_gym"`), which complete rollouts that lack their
//! verifier's fields. Nothing else is needed, so a file with `[environment]`
//! alone will do, and a whole job config works as it is (its other tables are
//! not read here).

use std::path::{Path, PathBuf};

use super::environment::{read_environment, EnvironmentConfig};
use super::file::{DatasetFile, DatasetFormat};
use super::job::NemoGymConfig;
use super::paths::{Resolver, Want};
use super::tables::Tables;
use super::trust::Trust;
use crate::diagnostics::document::{read_config_file, Source};
use crate::diagnostics::problem::Problem;

/// A resources server and the rows to complete rollouts from.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyConfig {
    pub environment: NemoGymConfig,
    /// `[dataset] rows` of format `nemo_gym`, resolved; `None` without them.
    pub rows: Option<PathBuf>,
}

/// Read the config at `path`; every problem is reported.
pub fn load_verify(path: &Path) -> Result<VerifyConfig, Vec<Problem>> {
    let (text, base) = read_config_file(path, "the config")?;
    let source = Source::toml(path, &text);
    let mut root = source.parse()?;
    let mut problems = Vec::new();
    // The other tables of a whole job config are left unread.
    let mut tables = Tables::take(&mut root, &["environment", "dataset"]);
    let environment = match tables.optional("environment") {
        Some(node) => read_environment(&source, node, &base, Trust::Local, &mut problems),
        None => {
            problems.push(Problem::at_field(
                path,
                "environment",
                "is missing; re-verifying rollouts needs the resources server: [environment] \
                 kind = \"nemo_gym\" with base_url",
            ));
            None
        }
    };
    let environment = environment.and_then(|environment| match environment {
        EnvironmentConfig::NemoGym(config) => Some(config),
        _ => {
            problems.push(Problem::at_field(
                path,
                "environment.kind",
                "re-verifying rollouts needs a NeMo Gym resources server: kind = \
                     \"nemo_gym\" with base_url",
            ));
            None
        }
    });
    let resolver = Resolver {
        file: path,
        base: &base,
        trust: Trust::Local,
    };
    let rows = tables
        .optional("dataset")
        .and_then(|node| source.typed::<DatasetFile>("dataset", node, &mut problems))
        .filter(|d| d.format == Some(DatasetFormat::NemoGym))
        .and_then(|d| d.rows)
        .and_then(|rows| resolver.existing("dataset.rows", &rows, Want::File, &mut problems));
    match environment {
        Some(environment) if problems.is_empty() => Ok(VerifyConfig { environment, rows }),
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("verify.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn an_environment_alone_is_enough() {
        let (_dir, path) =
            write("[environment]\nkind = \"nemo_gym\"\nbase_url = \"http://127.0.0.1:18411/\"\n");
        let config = load_verify(&path).unwrap();
        assert_eq!(config.environment.base_url, "http://127.0.0.1:18411");
        assert_eq!(config.rows, None);
    }

    #[test]
    fn nemo_gym_rows_are_resolved_from_the_configs_folder_and_must_exist() {
        let (dir, path) = write(
            "[environment]\nkind = \"nemo_gym\"\nbase_url = \"http://h:1\"\n\
             [dataset]\nformat = \"nemo_gym\"\nrows = \"rows.jsonl\"\n",
        );
        let problems = load_verify(&path).unwrap_err();
        assert!(
            problems[0].to_string().contains("dataset.rows")
                && problems[0].to_string().contains("does not exist"),
            "{problems:?}"
        );
        std::fs::write(dir.path().join("rows.jsonl"), "").unwrap();
        let rows = load_verify(&path).unwrap().rows.unwrap();
        assert!(rows.ends_with("rows.jsonl") && rows.is_absolute());
    }

    #[test]
    fn another_kind_or_no_environment_is_refused_naming_the_field() {
        let (_dir, path) = write("[environment]\nname = \"builtin:retail\"\n");
        let problems = load_verify(&path).unwrap_err();
        assert!(problems[0].to_string().contains("environment.kind"));
        let (_dir, path) = write("[dataset]\nformat = \"nemo_gym\"\n");
        let problems = load_verify(&path).unwrap_err();
        assert!(
            problems[0].to_string().contains("environment: is missing"),
            "{problems:?}"
        );
    }
}
