//! An Azure OpenAI endpoint's two keys: `azure_deployment` (the deployment's
//! name, which Azure puts in the URL path) and `azure_api_version` (the
//! `api-version` query parameter, a date such as `2024-10-21`, or one with
//! `-preview`). Both or neither.

use std::path::Path;

use super::job::AzureDeployment;
use crate::diagnostics::problem::Problem;

/// Longest deployment name Azure accepts.
const MAX_DEPLOYMENT: usize = 64;

/// Whether `version` is `YYYY-MM-DD` or `YYYY-MM-DD-preview`, the date a
/// real one (years 2022 to 2099).
fn valid_api_version(version: &str) -> bool {
    let date = version.strip_suffix("-preview").unwrap_or(version);
    let parts: Vec<&str> = date.split('-').collect();
    let [year, month, day] = parts.as_slice() else {
        return false;
    };
    let number = |s: &str, len: usize| {
        (s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    matches!(
        (number(year, 4), number(month, 2), number(day, 2)),
        (Some(2022..=2099), Some(1..=12), Some(1..=31))
    )
}

fn valid_deployment(name: &str) -> bool {
    (1..=MAX_DEPLOYMENT).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// The deployment of `endpoints.NAME` (`field` prefixes the keys), when both
/// keys are given and valid; `None` when neither is, or with problems pushed.
pub fn check_azure(
    file: &Path,
    field: &dyn Fn(&str) -> String,
    deployment: Option<&str>,
    api_version: Option<&str>,
    problems: &mut Vec<Problem>,
) -> Option<AzureDeployment> {
    let before = problems.len();
    match (deployment, api_version) {
        (None, None) => return None,
        (Some(_), None) => problems.push(Problem::at_field(
            file,
            &field("azure_api_version"),
            "is missing: an Azure deployment needs the API version too, e.g. \
             azure_api_version = \"2024-10-21\"",
        )),
        (None, Some(_)) => problems.push(Problem::at_field(
            file,
            &field("azure_deployment"),
            "is missing: azure_api_version is for an Azure OpenAI deployment; name it \
             (azure_deployment = \"NAME\") or remove azure_api_version",
        )),
        (Some(_), Some(_)) => {}
    }
    if let Some(name) = deployment {
        if !valid_deployment(name) {
            problems.push(Problem::at_field(
                file,
                &field("azure_deployment"),
                format!(
                    "{name:?} is not a deployment name: 1 to {MAX_DEPLOYMENT} letters, \
                     digits, '-', '_' or '.'"
                ),
            ));
        }
    }
    if let Some(version) = api_version {
        if !valid_api_version(version) {
            problems.push(Problem::at_field(
                file,
                &field("azure_api_version"),
                format!(
                    "{version:?} is not an Azure OpenAI API version: a date YYYY-MM-DD \
                     (2022 to 2099), optionally followed by -preview, e.g. \"2024-10-21\""
                ),
            ));
        }
    }
    match (deployment, api_version) {
        (Some(deployment), Some(api_version)) if problems.len() == before => {
            Some(AzureDeployment {
                deployment: deployment.to_string(),
                api_version: api_version.to_string(),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(
        deployment: Option<&str>,
        version: Option<&str>,
    ) -> (Option<AzureDeployment>, Vec<String>) {
        let mut problems = Vec::new();
        let field = |f: &str| format!("endpoints.gpt.{f}");
        let result = check_azure(
            Path::new("job.toml"),
            &field,
            deployment,
            version,
            &mut problems,
        );
        (result, problems.iter().map(|p| p.to_string()).collect())
    }

    #[test]
    fn both_keys_or_neither() {
        assert_eq!(check(None, None), (None, vec![]));
        let (result, problems) = check(Some("gpt-4o"), Some("2024-10-21"));
        assert_eq!(
            result,
            Some(AzureDeployment {
                deployment: "gpt-4o".into(),
                api_version: "2024-10-21".into()
            }),
            "{problems:?}"
        );
        let (result, problems) = check(Some("gpt-4o"), None);
        assert_eq!(result, None);
        assert!(
            problems[0].contains("endpoints.gpt.azure_api_version"),
            "{problems:?}"
        );
        let (_, problems) = check(None, Some("2024-10-21"));
        assert!(
            problems[0].contains("endpoints.gpt.azure_deployment"),
            "{problems:?}"
        );
    }

    #[test]
    fn api_versions_are_dates_maybe_previews() {
        for good in ["2024-10-21", "2025-04-01-preview", "2022-12-01"] {
            assert!(valid_api_version(good), "{good}");
        }
        for bad in [
            "2024-13-01",
            "24-10-21",
            "2024-10-21-beta",
            "latest",
            "",
            "2024-1-01",
            "1999-01-01",
        ] {
            assert!(!valid_api_version(bad), "{bad}");
        }
    }

    #[test]
    fn deployment_names_are_path_safe() {
        assert!(valid_deployment("gpt-4o_mini.2"));
        for bad in ["", "a/b", "a b", "a?b", &"x".repeat(65)] {
            assert!(!valid_deployment(bad), "{bad}");
        }
        let (_, problems) = check(Some("../admin"), Some("2024-10-21"));
        assert!(
            problems[0].contains("not a deployment name"),
            "{problems:?}"
        );
    }
}
