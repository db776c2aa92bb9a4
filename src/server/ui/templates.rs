//! The web UI's tera templates (`src/server/templates/`), embedded in the
//! binary and parsed once. Every page template ends in `.html`, so tera
//! escapes every value it prints: a page never writes HTML by hand.

use std::sync::LazyLock;

use serde::Serialize;
use tera::{Context, Tera};

use crate::error_chain::{error_chain_with, Repeats};
use crate::server::ApiError;

/// (name, text) of every template; the names end in `.html` (autoescaped)
/// except the style sheet, which holds no values.
const TEMPLATES: [(&str, &str); 12] = [
    ("ui.css", include_str!("../templates/ui.css")),
    ("base.html", include_str!("../templates/base.html")),
    ("macros.html", include_str!("../templates/macros.html")),
    ("jobs.html", include_str!("../templates/jobs.html")),
    ("job.html", include_str!("../templates/job.html")),
    (
        "judging_job.html",
        include_str!("../templates/judging_job.html"),
    ),
    (
        "conversation.html",
        include_str!("../templates/conversation.html"),
    ),
    ("judgment.html", include_str!("../templates/judgment.html")),
    (
        "synthesis_job.html",
        include_str!("../templates/synthesis_job.html"),
    ),
    ("proposal.html", include_str!("../templates/proposal.html")),
    ("error.html", include_str!("../templates/error.html")),
    (
        "evaluation.html",
        include_str!("../templates/evaluation.html"),
    ),
];

static PAGES: LazyLock<Result<Tera, String>> = LazyLock::new(|| {
    // The pages are ours, but get no more than a prompt does: no environment.
    let mut tera = crate::prompt::sandboxed_tera();
    tera.add_raw_templates(TEMPLATES)
        .map_err(|e| error_chain_with(&e, Repeats::Written))?;
    Ok(tera)
});

/// Page `name` with `page`'s fields as its variables.
pub fn render(name: &str, page: &impl Serialize) -> Result<String, ApiError> {
    let tera = PAGES
        .as_ref()
        .map_err(|e| ApiError::Internal(format!("the UI's templates do not parse: {e}")))?;
    let context = Context::from_serialize(page).map_err(|e| {
        ApiError::Internal(format!(
            "page {name}: {}",
            error_chain_with(&e, Repeats::Written)
        ))
    })?;
    tera.render(name, &context).map_err(|e| {
        ApiError::Internal(format!(
            "page {name}: {}",
            error_chain_with(&e, Repeats::Written)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses_and_values_are_escaped() {
        if let Err(e) = PAGES.as_ref() {
            panic!("{e}");
        }
        let page = render(
            "error.html",
            &serde_json::json!({"title": "<b>", "status": "404", "message": "<script>x</script>"}),
        )
        .unwrap();
        assert!(
            page.contains("&lt;script&gt;x&lt;&#x2F;script&gt;"),
            "{page}"
        );
        assert!(!page.contains("<script>"), "{page}");
    }
}
