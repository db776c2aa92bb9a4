//! `sparring init [DIR]`: the starter project, from the files built into the
//! binary, and the command that runs it.

use std::path::Path;

use crate::starter::{write_starter, CONFIG};

use super::EXIT_INVALID;

pub fn init(dir: &Path, force: bool) -> anyhow::Result<i32> {
    let written = match write_starter(dir, force) {
        Ok(written) => written,
        Err(e) if e.is_invalid_input() => {
            eprintln!("error: {e}");
            return Ok(EXIT_INVALID);
        }
        Err(e) => return Err(e.into()),
    };
    let replaced = match written.replaced.len() {
        0 => String::new(),
        n => format!(", {n} of them over files of the same name"),
    };
    println!(
        "wrote a starter project to {} ({} files{replaced}): {CONFIG}, its personas, \
         scenarios and prompts",
        dir.display(),
        written.files,
    );
    let config = if dir == Path::new(".") {
        Path::new(CONFIG).to_path_buf()
    } else {
        dir.join(CONFIG)
    };
    println!(
        "next: sparring run {}",
        shell_word(&config.display().to_string())
    );
    Ok(0)
}

/// `word` as a shell reads it back: quoted when it holds anything beyond
/// letters, digits and `_-./+,:@`.
fn shell_word(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./+,:@".contains(c));
    if plain && !word.is_empty() {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_spaces_or_quotes_is_quoted_for_the_shell() {
        assert_eq!(shell_word("q/quickstart.toml"), "q/quickstart.toml");
        assert_eq!(shell_word("my q/quickstart.toml"), "'my q/quickstart.toml'");
        assert_eq!(
            shell_word("it's/quickstart.toml"),
            r"'it'\''s/quickstart.toml'"
        );
    }
}
