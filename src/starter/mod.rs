//! The starter project `sparring init` writes: the quickstart's job config
//! with the personas, scenarios and prompts it names, built into the binary
//! from the repository, at the same paths as in the repository (whose root is
//! itself a starter project), so that `sparring run DIR/quickstart.toml` runs
//! with nothing else and the files are the repository's, byte for byte.

mod write;

pub use write::{write_starter, InitError, Written};

/// One file of the starter project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StarterFile {
    /// Its path in the starter project, and in the repository.
    pub path: &'static str,
    pub text: &'static str,
}

macro_rules! starter {
    ($($path:literal),* $(,)?) => {
        [$(StarterFile {
            path: $path,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $path)),
        }),*]
    };
}

/// The config a starter project runs.
pub const CONFIG: &str = "quickstart.toml";

/// Every file of the starter project, the config first.
pub const FILES: [StarterFile; 16] = starter!(
    "quickstart.toml",
    "prompts/user_simulator.tera",
    "prompts/policies/default.tera",
    "data/retail/scenarios.jsonl",
    "personas/anxious_first_time_shopper.toml",
    "personas/budget_student.toml",
    "personas/gift_buying_grandparent.toml",
    "personas/impatient_executive.toml",
    "personas/night_shift_nurse.toml",
    "personas/non_native_speaker.toml",
    "personas/precise_developer.toml",
    "personas/retired_teacher.toml",
    "personas/screen_reader_user.toml",
    "personas/skeptical_shop_owner.toml",
    "personas/spanish_speaking_parent.toml",
    "personas/upset_customer.toml",
);

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn repo() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn the_starter_holds_every_persona_of_the_repositorys_personas_folder() {
        // The quickstart's `personas = "personas"` reads every `*.toml` there.
        let mut in_repo: Vec<String> = std::fs::read_dir(repo().join("personas"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".toml"))
            .map(|name| format!("personas/{name}"))
            .collect();
        in_repo.sort();
        let starter: Vec<&str> = FILES
            .iter()
            .map(|f| f.path)
            .filter(|p| p.starts_with("personas/"))
            .collect();
        assert_eq!(starter, in_repo);
    }

    #[test]
    fn the_starter_holds_every_file_its_config_names() {
        let config: toml::Value = toml::from_str(FILES[0].text).unwrap();
        assert_eq!(FILES[0].path, CONFIG);
        let named = [
            &config["user_simulator"]["template"],
            &config["policy"]["template"],
            &config["dataset"]["scenarios"],
        ];
        for path in named {
            let path = path.as_str().unwrap();
            assert!(
                FILES.iter().any(|f| f.path == path),
                "{CONFIG} names {path}"
            );
        }
        assert_eq!(config["dataset"]["personas"].as_str(), Some("personas"));
    }
}
