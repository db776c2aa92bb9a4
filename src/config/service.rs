//! The service boundary, as config loading sees it. A config submitted to
//! `sparring serve` comes from whoever holds the token, so it is read with
//! [`Trust::Submitted`]: every path it names must resolve inside the
//! service's data root (after symlinks), and its endpoints get no key from the
//! server's environment; keys live only in the operator's endpoints
//! (`serve --endpoints FILE`), which a submitted config names by name and
//! then reaches exactly at the URL the operator pinned. The CLI, run by a user
//! on their own files, and jobs read back from the database use
//! [`Trust::Local`].

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::endpoint::{check_endpoint, read_endpoint, EndpointFile};
use super::tables::Tables;
pub use super::trust::{Boundary, OperatorEndpoints, Trust};
use crate::diagnostics::document::{child, Source};
use crate::diagnostics::problem::Problem;
use crate::egress::EgressAllowlist;

impl Boundary {
    /// `data_root` is resolved to its canonical path. One that cannot be (it
    /// does not exist) is kept as given, and then nothing resolves inside it:
    /// resolved paths are canonical. `sparring serve` checks it exists first.
    pub fn new(data_root: PathBuf, operators: OperatorEndpoints) -> Boundary {
        Boundary {
            data_root: data_root.canonicalize().unwrap_or(data_root),
            operators,
            egress: EgressAllowlist::default(),
        }
    }

    /// This boundary, reaching out only to the URLs `egress` allows.
    pub fn with_egress(self, egress: EgressAllowlist) -> Boundary {
        Boundary { egress, ..self }
    }

    /// A problem at `field` when the service may not connect to `url`.
    pub fn check_url(&self, label: &Path, field: &str, url: &str) -> Option<Problem> {
        self.egress
            .check(url)
            .err()
            .map(|why| Problem::at_field(label, field, why))
    }

    pub fn data_root(&self) -> &Path {
        &self.data_root
    }

    /// The folder `?base=` names (relative to the data root; none: the root
    /// itself), if it is a folder inside the data root.
    pub fn base(&self, base: Option<&str>) -> Option<PathBuf> {
        let Some(base) = base else {
            return Some(self.data_root.clone());
        };
        let path = Path::new(base);
        if path.is_absolute() {
            return None;
        }
        let resolved = inside(&self.data_root, &self.data_root, path)?;
        resolved.is_dir().then_some(resolved)
    }

    /// `path` (relative to `base`) resolved inside the data root, or a problem
    /// at `field` that says nothing about the file itself: whether something
    /// exists outside the data root is not the submitter's business.
    pub fn contain(
        &self,
        label: &Path,
        field: &str,
        base: &Path,
        path: &Path,
    ) -> Result<PathBuf, Problem> {
        inside(&self.data_root, base, path).ok_or_else(|| {
            Problem::at_field(
                label,
                field,
                "is outside the service's data root; a config submitted to the service may \
                 name only files under its data root, by a path relative to ?base= (or to the \
                 data root), without `..` out of it or symlinks that lead out of it",
            )
        })
    }
}

/// `path` joined to `base` with every symlink resolved, if the result lies
/// inside `root` (which is canonical). A path that does not exist (yet) is
/// resolved as far as it exists; the rest may not climb with `..`.
pub fn inside(root: &Path, base: &Path, path: &Path) -> Option<PathBuf> {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut existing = joined.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    let resolved = loop {
        match existing.canonicalize() {
            Ok(resolved) => break resolved,
            // A link that leads nowhere (yet) could lead out later.
            Err(_) if std::fs::symlink_metadata(existing).is_ok() => return None,
            Err(_) => {
                let name = existing.file_name();
                let parent = existing.parent()?;
                match name {
                    Some(name) => rest.push(name),
                    // `..` or `.` at the end of a path that does not exist.
                    None => return None,
                }
                existing = parent;
            }
        }
    };
    // What did not exist is taken as written: any `..` in it would be resolved
    // by the system against names that do not exist, so it is refused.
    let mut full = resolved;
    for name in rest.iter().rev() {
        if Path::new(name)
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return None;
        }
        full.push(name);
    }
    full.starts_with(root).then_some(full)
}

impl OperatorEndpoints {
    pub fn get(&self, name: &str) -> Option<&EndpointFile> {
        self.endpoints.get(name)
    }

    pub fn is_empty(&self) -> bool {
        self.endpoints.is_empty()
    }

    /// Endpoint `name` as a model is built from (`sparring mine --endpoint`);
    /// `file` is where the endpoints were read, for problems.
    pub fn config(&self, file: &Path, name: &str) -> Option<crate::config::EndpointConfig> {
        let endpoint = self.endpoints.get(name)?;
        let mut problems = Vec::new();
        check_endpoint(file, name, endpoint, Trust::Local, &mut problems)
    }

    /// `a, b` for messages, or a note that there are none.
    pub fn names(&self) -> String {
        if self.endpoints.is_empty() {
            "none (the operator can add some with `sparring serve --endpoints FILE`)".to_string()
        } else {
            self.endpoints
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    /// Read an endpoints file (`[endpoints.NAME]` tables, each a server with
    /// `base_url` or the mock), checking each as a job's own endpoint,
    /// including that its key variable is set.
    pub fn load(path: &Path) -> Result<OperatorEndpoints, Vec<Problem>> {
        let text = crate::regular_file::read_to_string(path).map_err(|e| {
            vec![Problem::in_file(
                path,
                format!("cannot read the endpoints file: {e}"),
            )]
        })?;
        OperatorEndpoints::from_text(path, &text)
    }

    pub fn from_text(path: &Path, text: &str) -> Result<OperatorEndpoints, Vec<Problem>> {
        let source = Source::toml(path, text);
        let mut root = source.parse()?;
        let mut problems = Vec::new();
        let mut endpoints = BTreeMap::new();
        let mut tables = Tables::take(&mut root, &["endpoints"]);
        for (key, _) in root.iter() {
            problems.push(source.at(
                key.span(),
                key.get_ref(),
                "is not part of an endpoints file, which holds only [endpoints.NAME] tables",
            ));
        }
        match tables.optional("endpoints") {
            None => problems.push(Problem::in_file(
                path,
                "no endpoints are defined; add e.g. [endpoints.gpt] with base_url, model and \
                 api_key_env",
            )),
            Some(node) => match node.into_inner() {
                toml::de::DeValue::Table(table) => {
                    for (name, node) in table {
                        let name = name.into_inner().into_owned();
                        let field = child("endpoints", &name);
                        let Some(endpoint) = read_endpoint(&source, &field, node, &mut problems)
                        else {
                            continue;
                        };
                        if let EndpointFile::Operator { .. } = endpoint {
                            problems.push(Problem::at_field(
                                path,
                                &child(&field, "operator"),
                                "an operator endpoint is a server (base_url) or the mock; it \
                                 cannot name another operator endpoint",
                            ));
                            continue;
                        }
                        if check_endpoint(path, &name, &endpoint, Trust::Local, &mut problems)
                            .is_some()
                        {
                            endpoints.insert(name, endpoint);
                        }
                    }
                }
                _ => problems.push(Problem::at_field(
                    path,
                    "endpoints",
                    "is not a table; write [endpoints.NAME] tables",
                )),
            },
        }
        if problems.is_empty() {
            Ok(OperatorEndpoints { endpoints })
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        std::fs::write(outside.join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("in")).unwrap();
        let root = root.canonicalize().unwrap();
        (dir, root, outside)
    }

    #[test]
    fn paths_inside_the_root_resolve_and_paths_out_of_it_do_not() {
        let (_dir, root, outside) = tree();
        assert_eq!(
            inside(&root, &root, Path::new("sub/a.txt")),
            Some(root.join("sub/a.txt"))
        );
        assert_eq!(
            inside(&root, &root, Path::new("in/a.txt")),
            Some(root.join("sub/a.txt"))
        );
        assert_eq!(
            inside(&root, &root, Path::new("sub/new.txt")),
            Some(root.join("sub/new.txt")),
            "a file that does not exist yet, inside"
        );
        for escape in [
            "../outside/secret.txt",
            "out/secret.txt",
            "out",
            "/etc/passwd",
            "sub/../..",
        ] {
            assert_eq!(inside(&root, &root, Path::new(escape)), None, "{escape}");
        }
        assert_eq!(
            inside(&root, &root, &outside.join("secret.txt")),
            None,
            "an absolute path out"
        );
        assert_eq!(inside(&root, &root, Path::new("nothere/../../x")), None);
    }

    #[test]
    fn base_is_a_folder_inside_the_root() {
        let (_dir, root, _) = tree();
        let boundary = Boundary::new(root.clone(), OperatorEndpoints::default());
        assert_eq!(boundary.base(None), Some(root.clone()));
        assert_eq!(boundary.base(Some("sub")), Some(root.join("sub")));
        assert_eq!(boundary.base(Some("../..")), None);
        assert_eq!(boundary.base(Some("/")), None);
        assert_eq!(boundary.base(Some("out")), None);
        assert_eq!(boundary.base(Some("sub/a.txt")), None, "not a folder");
    }

    #[test]
    fn an_operator_endpoints_file_checks_each_endpoint_and_its_key() {
        let problems = OperatorEndpoints::from_text(
            Path::new("endpoints.toml"),
            "[endpoints.gpt]\nbase_url = \"http://h/v1\"\nmodel = \"m\"\n\
             api_key_env = \"SPARRING_TEST_SURELY_UNSET\"\n[endpoints.x]\noperator = \"gpt\"\n",
        )
        .unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        let operators = OperatorEndpoints::from_text(
            Path::new("endpoints.toml"),
            "[endpoints.gpt]\nbase_url = \"http://h/v1\"\nmodel = \"m\"\napi_key_env = \"HOME\"\n",
        )
        .unwrap();
        assert_eq!(operators.names(), "gpt");
    }

    mod containment {
        use proptest::prelude::*;

        use super::*;

        fn part() -> impl Strategy<Value = &'static str> {
            prop::sample::select(vec![
                "sub",
                "a.txt",
                "..",
                ".",
                "out",
                "in",
                "secret.txt",
                "new",
                "outside",
                "root",
            ])
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            /// Whatever a path is built from (`..`, `.`, symlinks in and out,
            /// absolute starts), what `inside` accepts is inside the root once
            /// every symlink is resolved by the system itself.
            #[test]
            fn no_path_escapes_the_root(
                absolute in any::<bool>(),
                parts in prop::collection::vec(part(), 0..6),
            ) {
                let (dir, root, _) = tree();
                let mut path = if absolute { dir.path().to_path_buf() } else { PathBuf::new() };
                for p in &parts {
                    path.push(p);
                }
                if let Some(resolved) = inside(&root, &root, &path) {
                    prop_assert!(resolved.starts_with(&root));
                    let joined = root.join(&path);
                    if let Ok(real) = joined.canonicalize() {
                        prop_assert!(real.starts_with(&root), "{} -> {}", path.display(), real.display());
                        prop_assert_eq!(real, resolved);
                    }
                }
            }
        }
    }
}
