//! `usersim export --job ID --format openai --out FILE [--min-reward X]`

use std::io::BufWriter;
use std::path::Path;

use anyhow::Context;

use crate::export::{self, Filter, Format};
use crate::store;

use super::EXIT_INVALID;

pub async fn export(
    database: &str,
    job: i64,
    format: &str,
    out: &Path,
    min_reward: Option<f64>,
) -> anyhow::Result<i32> {
    let Some(format) = Format::parse(format) else {
        eprintln!("--format {format} is not supported; supported formats: openai");
        return Ok(EXIT_INVALID);
    };
    let store = store::open(database).await?;
    if store.get_job(job).await?.is_none() {
        eprintln!("job {job} is not in {database}");
        return Ok(EXIT_INVALID);
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // Write to a temporary file and rename, so a failed export never leaves a
    // truncated file where a good one was.
    let partial = out.with_extension("jsonl.partial");
    let file = std::fs::File::create(&partial)
        .with_context(|| format!("cannot create {}", partial.display()))?;
    let mut writer = BufWriter::new(file);
    let filter = Filter { min_reward };
    let counts = export::write(
        store.as_ref(),
        job,
        format,
        &filter,
        &mut writer,
        &mut |c| {
            eprint!(
                "\rexported {} conversations ({} skipped)",
                c.written, c.skipped
            )
        },
    )
    .await?;
    drop(writer);
    std::fs::rename(&partial, out)
        .with_context(|| format!("cannot move the export to {}", out.display()))?;
    eprintln!();
    println!(
        "wrote {} conversations to {} ({} skipped by filters or not scored)",
        counts.written,
        out.display(),
        counts.skipped
    );
    Ok(0)
}
