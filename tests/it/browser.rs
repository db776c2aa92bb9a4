//! The web UI as a person sees it, through Debian's headless Chromium: open the
//! jobs page with the token, follow the job's link, click the first
//! conversation, and read the chat. Each page is its own `chromium --dump-dom`
//! run, a new browser session that has lost the first page's session cookie,
//! so every page is opened with `?token=` as a bookmarked link would be.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Service;
use serde_json::Value;

const CHROMIUM: &str = "/usr/bin/chromium";
const TOKEN: &str = "browser-token-42";
const CHROMIUM_TIME_LIMIT: Duration = Duration::from_secs(60);

/// Headless Chromium with a profile of its own in a temp dir.
struct Browser {
    dir: tempfile::TempDir,
}

impl Browser {
    fn new() -> Browser {
        Browser {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn profile(&self) -> PathBuf {
        self.dir.path().join("profile")
    }

    /// The page's DOM after it loaded, serialized as HTML.
    async fn dump_dom(&self, url: &str) -> String {
        let out = self.dir.path().join("dom.html");
        self.run(vec!["--dump-dom".into(), url.into()], &out).await;
        std::fs::read_to_string(&out).unwrap()
    }

    /// A PNG of the page at 1280×1600, written to `png`.
    async fn screenshot(&self, url: &str, png: &Path) {
        let args = vec![
            format!("--screenshot={}", png.display()),
            "--window-size=1280,1600".into(),
            "--hide-scrollbars".into(),
            url.into(),
        ];
        self.run(args, &self.dir.path().join("screenshot.out"))
            .await;
    }

    /// Chromium with `args`, stdout into `stdout` (a file, so that a large page
    /// cannot fill a pipe nobody reads), killed after the time limit.
    async fn run(&self, args: Vec<String>, stdout: &Path) {
        let stderr_path = self.dir.path().join("chromium.err");
        let mut command = Command::new(CHROMIUM);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
            ])
            .arg(format!("--user-data-dir={}", self.profile().display()))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(stdout).unwrap())
            .stderr(std::fs::File::create(&stderr_path).unwrap());
        // Blocking waits run off the runtime's threads: the server under test
        // shares them.
        let status = tokio::task::spawn_blocking(move || {
            let mut child = command.spawn().unwrap();
            let started = Instant::now();
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    return Some(status);
                }
                if started.elapsed() > CHROMIUM_TIME_LIMIT {
                    let _ = child.kill();
                    let _ = child.wait();
                    return None;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
        .await
        .unwrap();
        let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        match status {
            Some(status) => assert!(
                status.success(),
                "chromium {args:?} exited with {status}:\n{stderr}"
            ),
            None => panic!("chromium {args:?} ran over {CHROMIUM_TIME_LIMIT:?}:\n{stderr}"),
        }
    }
}

/// Text as Chromium serializes a text node back to HTML is turned back to text.
fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// Every `href="PREFIX…"` in the page, in order.
fn links_starting_with(dom: &str, prefix: &str) -> Vec<String> {
    let needle = format!("href=\"{prefix}");
    dom.match_indices(&needle)
        .map(|(at, _)| {
            let start = at + "href=\"".len();
            let end = start + dom[start..].find('"').unwrap();
            unescape(&dom[start..end])
        })
        .collect()
}

/// The text between `open` and the next `close` after it, if any.
fn between<'a>(html: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = html.find(open)? + open.len();
    let end = start + html[start..].find(close)?;
    Some(&html[start..end])
}

/// One chat bubble as shown: who speaks, their text, the tool calls' names.
#[derive(Debug, PartialEq)]
struct Bubble {
    role: String,
    text: Option<String>,
    tool_calls: Vec<String>,
}

fn bubbles_on_page(dom: &str) -> Vec<Bubble> {
    let chat = between(dom, "<section class=\"chat\">", "</section>").expect("a chat section");
    chat.split("<div class=\"bubble ")
        .skip(1)
        .map(|bubble| {
            // Tool results follow the bubble as siblings; they are not its own.
            let bubble = bubble.split("<details class=\"tool\"").next().unwrap();
            Bubble {
                role: bubble[..bubble.find('"').unwrap()].to_string(),
                text: between(bubble, "<div class=\"text\">", "</div>").map(unescape),
                tool_calls: bubble
                    .split("<details class=\"call\">")
                    .skip(1)
                    .map(|call| {
                        let name = between(call, "<summary>tool call: ", "</summary>")
                            .expect("a tool call's summary");
                        unescape(name)
                    })
                    .collect(),
            }
        })
        .collect()
}

fn bubbles_of(conversation: &Value) -> Vec<Bubble> {
    conversation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system" && m["role"] != "tool")
        .map(|m| {
            let content = m["content"].as_str().unwrap();
            Bubble {
                role: m["role"].as_str().unwrap().to_string(),
                text: (!content.is_empty()).then(|| content.to_string()),
                tool_calls: m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|call| call["name"].as_str().unwrap().to_string())
                    .collect(),
            }
        })
        .collect()
}

fn chromium_is_missing() -> bool {
    if Path::new(CHROMIUM).exists() {
        return false;
    }
    println!(
        "SKIPPED: browser test: {CHROMIUM} is missing; install Debian's Chromium with `apt-get install -y chromium` (.ci/run does)"
    );
    true
}

#[tokio::test]
async fn a_person_opens_the_job_and_reads_a_conversation_in_chromium() {
    if chromium_is_missing() {
        return;
    }
    let service = Service::start(TOKEN).await;
    let job = service.submit("browsed", 5).await;
    let detail = service.wait_until_done(job).await;
    assert_eq!(detail["counts"]["done"], 5, "{detail}");
    let browser = Browser::new();
    let started = Instant::now();

    let with_token = |path: &str| format!("{}{path}?token={TOKEN}", service.url);

    // The jobs page lists the job as done.
    let jobs = browser.dump_dom(&with_token("/")).await;
    assert!(jobs.contains("<h1>Jobs</h1>"), "{jobs}");
    let row = jobs
        .split("<tr>")
        .find(|row| row.contains(&format!(">{job}</td>")))
        .unwrap_or_else(|| panic!("job {job} is not listed: {jobs}"));
    assert!(row.contains("browsed</a>"), "{row}");
    assert!(row.contains("<td class=\"status done\">done</td>"), "{row}");
    assert!(row.contains("<progress max=\"5\" value=\"5\">"), "{row}");
    assert!(row.contains("5 done, 0 failed, 0 left"), "{row}");
    let job_link = links_starting_with(row, "/jobs/");
    assert_eq!(job_link, [format!("/jobs/{job}")]);

    // The job's page, reached by its link.
    let job_page = browser.dump_dom(&with_token(&job_link[0])).await;
    assert!(
        job_page.contains(&format!("<h1>Job {job}: browsed</h1>")),
        "{job_page}"
    );
    assert!(job_page.contains("5 done, 0 failed, 0 left"), "{job_page}");
    let conversation_links = links_starting_with(&job_page, "/conversations/");
    assert_eq!(conversation_links.len(), 5, "{job_page}");

    // The first conversation, as a person clicks it.
    let first = &conversation_links[0];
    let id: i64 = first["/conversations/".len()..].parse().unwrap();
    let page = browser.dump_dom(&with_token(first)).await;
    let conversation = service.json(&format!("/v1/conversations/{id}")).await;
    assert!(
        page.contains(&format!("<h1>Conversation {id}</h1>")),
        "{page}"
    );

    let shown = bubbles_on_page(&page);
    let stored = bubbles_of(&conversation);
    assert_eq!(shown, stored, "the chat differs from the stored messages");
    for role in ["user", "assistant"] {
        assert!(
            shown.iter().any(|b| b.role == role && b.text.is_some()),
            "no {role} text in {shown:?}"
        );
    }
    assert!(
        shown.iter().any(|b| !b.tool_calls.is_empty()),
        "the mock policy calls tools; none shown in {shown:?}"
    );

    // Tool calls, their results and the system prompt are folded.
    let results = conversation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    assert_eq!(page.matches("<details class=\"tool\">").count(), results);
    // The system prompt is one more.
    let details: Vec<&str> = page
        .split("<details")
        .skip(1)
        .map(|tag| &tag[..tag.find('>').unwrap()])
        .collect();
    let calls: usize = shown.iter().map(|b| b.tool_calls.len()).sum();
    assert_eq!(details.len(), 1 + calls + results, "{details:?}");
    assert!(
        details
            .iter()
            .all(|attributes| !attributes.contains("open")),
        "something is unfolded: {details:?}"
    );

    // The reward and its breakdown, one row per component.
    let reward = conversation["reward"].as_f64().expect("a verified reward");
    assert!(
        page.contains(&format!("reward <b>{reward:.3}</b>")),
        "{page}"
    );
    let breakdown = between(&page, "<table class=\"breakdown\"><tbody>", "</tbody>")
        .expect("a reward breakdown table");
    let components = conversation["reward_breakdown"].as_object().unwrap();
    assert!(!components.is_empty());
    for name in components.keys() {
        assert!(
            breakdown.contains(&format!("<tr><td>{name}</td>")),
            "{name} is not in the breakdown: {breakdown}"
        );
    }
    assert_eq!(breakdown.matches("<tr>").count(), components.len());

    // What it looks like: a PNG of the width asked for.
    let png = browser.dir.path().join("conversation.png");
    browser.screenshot(&with_token(first), &png).await;
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(
        bytes.len() > 10_000,
        "an empty-looking PNG: {} bytes",
        bytes.len()
    );
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 1280);

    println!(
        "browser: jobs, job {job}, conversation {id} ({} bubbles, {calls} tool calls, {results} results, {} reward components) and a screenshot in {:.1?}",
        shown.len(),
        components.len(),
        started.elapsed()
    );
}

/// The bubbles of one side of the side-by-side judgment page.
fn bubbles_of_side(dom: &str, side: &str) -> Vec<Bubble> {
    let open = format!("<section class=\"side side-{side}\">");
    let section =
        between(dom, &open, "</section>").unwrap_or_else(|| panic!("no side {side} in {dom}"));
    let chat = format!(
        "<section class=\"chat\">{}</section>",
        section
            .split("<div class=\"chat\">")
            .nth(1)
            .expect("a chat")
    );
    bubbles_on_page(&chat)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_compares_two_conversations_of_a_pairwise_judgment_side_by_side_in_chromium() {
    if chromium_is_missing() {
        return;
    }
    let service = Service::start(TOKEN).await;
    let a = service.submit("left", 2).await;
    let b = service.submit("right", 2).await;
    service.wait_until_done(a).await;
    service.wait_until_done(b).await;
    let judging = service.judge_pairwise(a, b).await;
    let browser = Browser::new();
    let with_token = |path: &str| format!("{}{path}?token={TOKEN}", service.url);

    // The judging job's page links its judgments; a person opens the first.
    let job_page = browser
        .dump_dom(&with_token(&format!("/jobs/{judging}")))
        .await;
    let judgments = links_starting_with(&job_page, "/judgments/");
    assert_eq!(judgments.len(), 2, "{job_page}");
    let page = browser.dump_dom(&with_token(&judgments[0])).await;
    let id: i64 = judgments[0]["/judgments/".len()..].parse().unwrap();
    let judgment = service.json(&format!("/v1/judgments/{id}")).await;

    for (side, key) in [("a", "conversation_a"), ("b", "conversation_b")] {
        let conversation = service
            .json(&format!("/v1/conversations/{}", judgment[key]))
            .await;
        assert_eq!(
            bubbles_of_side(&page, side),
            bubbles_of(&conversation),
            "side {side} differs from the stored conversation"
        );
    }
    assert!(page.contains("swap check: <b>"), "{page}");
    // Each order's raw output is folded.
    let raw: Vec<&str> = page.split("<details class=\"raw\"").skip(1).collect();
    assert_eq!(raw.len(), 2, "{page}");
    assert!(raw
        .iter()
        .all(|d| !d[..d.find('>').unwrap()].contains("open")));

    // What it looks like: a PNG of the two columns.
    let png = browser.dir.path().join("judgment.png");
    browser.screenshot(&with_token(&judgments[0]), &png).await;
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(bytes.len() > 10_000, "an empty-looking PNG");
}
