use super::*;
use crate::config::EnvironmentConfig;

fn load(text: &str) -> Result<SynthConfig, Vec<Problem>> {
    from_toml(
        Path::new("SYNTH.toml"),
        text,
        Path::new("/tmp"),
        Trust::Local,
    )
}

const GOOD: &str = r#"
name = "s"
target = 5
output = "out.jsonl"
[endpoints.generator]
mock = true
model = "mock-synth"
[roles]
generator = "generator"
[environment]
name = "builtin:retail"
"#;

#[test]
fn a_minimal_config_loads_with_its_defaults() {
    let c = load(GOOD).unwrap();
    assert_eq!(
        (c.head.target, c.head.max_attempts, c.head.max_proposals()),
        (5, 3, 50)
    );
    assert_eq!(c.head.output(), Path::new("/tmp/out.jsonl"));
    assert_eq!(c.generator.name, "generator");
}

#[test]
fn the_stored_snapshot_reads_back_as_the_same_config_with_endpoints_resolved() {
    let c = load(GOOD).unwrap();
    assert!(
        c.snapshot.contains("[endpoints.generator]"),
        "{}",
        c.snapshot
    );
    assert!(c.snapshot.contains("max_tokens"), "{}", c.snapshot);
    let again = from_snapshot(Path::new("job 1"), &c.snapshot, &c.base).unwrap();
    assert_eq!(again.snapshot, c.snapshot);
    assert_eq!(
        (again.head.target, again.head.output),
        (c.head.target, c.head.output)
    );
    assert_eq!(again.generator.settings.model, c.generator.settings.model);
}

#[test]
fn an_out_of_range_target_and_an_unknown_key_are_both_reported_with_where_and_what() {
    let text = GOOD.replace("target = 5", "target = 0\ntarget_count = 3");
    let problems = load(&text).unwrap_err();
    let all: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert!(
        all.iter()
            .any(|p| p.contains("target_count") && p.contains("line 4")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|p| p.contains("target") && p.contains("out of range")),
        "{all:?}"
    );
}

#[test]
fn a_generator_naming_no_endpoint_says_which_exist() {
    let problems =
        load(&GOOD.replace("generator = \"generator\"", "generator = \"gen\"")).unwrap_err();
    assert!(problems[0].to_string().contains("'gen'"), "{problems:?}");
    assert!(
        problems[0].to_string().contains("generator"),
        "{problems:?}"
    );
}

const SIMULATED: &str = r#"
name = "s"
target = 5
output = "out.jsonl"
[endpoints.generator]
mock = true
model = "mock-synth"
[endpoints.tools]
mock = true
model = "mock-tools"
[roles]
generator = "generator"
tools = "tools"
[environment]
kind = "simulated"
tools = "TOOLS"
"#;

fn simulated(text: &str) -> Result<SynthConfig, Vec<Problem>> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    from_toml(
        Path::new("SYNTH.toml"),
        &text.replace("TOOLS", "data/simulated/tools.json"),
        repo,
        Trust::Local,
    )
}

#[test]
fn a_simulated_environment_takes_the_tools_role_and_its_specs_path_from_the_config_folder() {
    let c = simulated(SIMULATED).unwrap();
    assert_eq!(c.tools.unwrap().name, "tools");
    let EnvironmentConfig::Simulated(s) = &c.environment else {
        panic!("not simulated: {:?}", c.environment);
    };
    assert!(s.tools.is_absolute() && s.tools.is_file(), "{s:?}");
}

#[test]
fn the_tools_role_is_required_for_a_simulated_environment_and_refused_for_others() {
    let p = simulated(&SIMULATED.replace("tools = \"tools\"\n", "")).unwrap_err();
    assert_eq!(p[0].location.as_deref(), Some("roles.tools"), "{p:?}");
    assert!(p[0].message.contains("is missing"), "{p:?}");
    let p = load(&GOOD.replace(
        "generator = \"generator\"",
        "generator = \"generator\"\ntools = \"generator\"",
    ))
    .unwrap_err();
    assert_eq!(p[0].location.as_deref(), Some("roles.tools"), "{p:?}");
    assert!(p[0].message.contains("not one"), "{p:?}");
    let p = simulated(&SIMULATED.replace("TOOLS", "nope.json")).unwrap_err();
    assert!(
        p.iter()
            .any(|p| p.location.as_deref() == Some("environment.tools")),
        "{p:?}"
    );
}
