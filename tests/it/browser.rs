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

    /// A PNG of the page `width` pixels wide (1600 high), written to `png`.
    async fn screenshot(&self, url: &str, width: u32, png: &Path) {
        let args = vec![
            format!("--screenshot={}", png.display()),
            format!("--window-size={width},1600"),
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

/// One chat bubble as shown: who speaks, their text (whole, also when a
/// long one is cut to a preview), the tool calls' names and how many of
/// them show their result.
#[derive(Debug, PartialEq)]
struct Bubble {
    role: String,
    text: Option<String>,
    tool_calls: Vec<String>,
    results: usize,
}

fn bubbles_on_page(dom: &str) -> Vec<Bubble> {
    let chat = between(dom, "<section class=\"chat\">", "</section>").expect("a chat section");
    chat.split("<div class=\"bubble ")
        .skip(1)
        .map(|bubble| {
            // A result whose call is not stored follows as a sibling.
            let bubble = bubble.split("<div class=\"orphan\"").next().unwrap();
            Bubble {
                role: bubble[..bubble.find('"').unwrap()].to_string(),
                text: between(bubble, "<div class=\"text\">", "</div>").map(unescape),
                tool_calls: bubble
                    .split("<span class=\"call-name\">")
                    .skip(1)
                    .map(|call| unescape(&call[..call.find("</span>").unwrap()]))
                    .collect(),
                results: bubble.matches(" class=\"result\"").count(),
            }
        })
        .collect()
}

fn bubbles_of(conversation: &Value) -> Vec<Bubble> {
    let messages = conversation["messages"].as_array().unwrap();
    let answered: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    messages
        .iter()
        .filter(|m| m["role"] != "system" && m["role"] != "tool")
        .map(|m| {
            let content = m["content"].as_str().unwrap();
            let calls: Vec<&Value> = m["tool_calls"].as_array().into_iter().flatten().collect();
            Bubble {
                role: m["role"].as_str().unwrap().to_string(),
                text: (!content.is_empty()).then(|| content.to_string()),
                tool_calls: calls
                    .iter()
                    .map(|call| call["name"].as_str().unwrap().to_string())
                    .collect(),
                results: calls
                    .iter()
                    .filter(|call| answered.contains(&call["id"].as_str().unwrap()))
                    .count(),
            }
        })
        .collect()
}

/// The PNG's width, from its IHDR chunk, after checking it is a PNG with
/// something drawn in it.
fn png_width(png: &Path) -> u32 {
    let bytes = std::fs::read(png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(
        bytes.len() > 10_000,
        "an empty-looking PNG: {} bytes",
        bytes.len()
    );
    u32::from_be_bytes(bytes[16..20].try_into().unwrap())
}

/// The page at a desktop's and a phone's width.
async fn screenshots(browser: &Browser, url: &str, name: &str) {
    for width in [1280, 390] {
        let png = browser.dir.path().join(format!("{name}-{width}.png"));
        browser.screenshot(url, width, &png).await;
        assert_eq!(png_width(&png), width, "{name}");
    }
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

    // Each tool result is shown with its call (the bubbles compared above
    // count them); only the system prompt and long blocks are folded.
    let results = conversation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    let calls: usize = shown.iter().map(|b| b.tool_calls.len()).sum();
    assert_eq!(shown.iter().map(|b| b.results).sum::<usize>(), results);
    assert_eq!(page.matches("<details class=\"system\">").count(), 1);
    let details: Vec<&str> = page
        .split("<details")
        .skip(1)
        .map(|tag| &tag[..tag.find('>').unwrap()])
        .collect();
    assert!(
        details
            .iter()
            .all(|attributes| !attributes.contains("open")),
        "something is unfolded: {details:?}"
    );

    // The reward and its breakdown, one row per component.
    let reward = conversation["reward"].as_f64().expect("a verified reward");
    let head = between(&page, "<p class=\"facts\">", "</p>").expect("the conversation's facts");
    assert!(head.contains(&format!(">{reward:.3}</b>")), "{head}");
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

    // Who the user was and what they wanted, in words, not ids.
    let scenario =
        between(&page, "<section class=\"scenario\">", "</section>").expect("the scenario's text");
    assert!(scenario.contains("reason for contact"), "{scenario}");
    assert!(scenario.contains("hidden from the policy"), "{scenario}");
    let persona =
        between(&page, "<section class=\"persona\">", "</section>").expect("the persona's text");
    assert!(persona.contains("speaking style"), "{persona}");
    let knobs = conversation["metadata"]["persona_knobs"]
        .as_object()
        .unwrap();
    for (knob, value) in knobs {
        assert!(
            persona.contains(&format!("{knob} = <b>{}</b>", value.as_str().unwrap())),
            "{knob} not shown: {persona}"
        );
    }

    // What it looks like, at a desktop's and a phone's width.
    screenshots(&browser, &with_token(first), "conversation").await;

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
    // Each order's output, the judge's reasoning, is shown, not folded.
    for call in judgment["calls"].as_array().unwrap() {
        let raw = call["call"]["raw_output"].as_str().unwrap();
        let shown = page
            .split("<div class=\"raw\">")
            .skip(1)
            .filter_map(|part| between(part, "<div class=\"text\">", "</div>"))
            .any(|text| unescape(text) == raw);
        assert!(shown, "{raw} is not shown in {page}");
    }

    // What it looks like: the two columns, and one under the other on a phone.
    screenshots(&browser, &with_token(&judgments[0]), "judgment").await;
}

/// The rows' conversation ids of a job page's table, in order.
/// The head of the conversation table (the job page's strata table, above
/// it, has a head of its own).
fn conversation_headers(dom: &str) -> &str {
    let table = between(dom, "<table class=\"conversations\">", "</table>").unwrap_or("");
    between(table, "<thead>", "</thead>").unwrap_or("")
}

fn table_ids(dom: &str) -> Vec<i64> {
    let table = between(dom, "<table class=\"conversations\">", "</table>").unwrap_or("");
    links_starting_with(table, "/conversations/")
        .iter()
        .map(|link| {
            let id = &link["/conversations/".len()..];
            id[..id.find('?').unwrap_or(id.len())].parse().unwrap()
        })
        .collect()
}

/// `score` as the plots print it (three decimals at most).
fn shown_score(s: f64) -> String {
    format!("{}", (s * 1000.0).round() / 1000.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_triages_a_job_by_its_plots_filters_and_why_conversations_failed_in_chromium() {
    if chromium_is_missing() {
        return;
    }
    let service = Service::start(TOKEN).await;
    // Every shipped scenario once: the mock policy skips the last write or
    // leaves the facts out on some (scenario, seed)s, deterministically.
    let job = service.submit_toml(service.job("triaged", 27, "")).await["id"]
        .as_i64()
        .unwrap();
    service.wait_until_done(job).await;
    let stored = service
        .json(&format!("/v1/jobs/{job}/conversations?limit=500"))
        .await;
    let stored = stored["conversations"].as_array().unwrap().clone();
    assert_eq!(stored.len(), 27);
    let reward_of = |id: i64| {
        stored
            .iter()
            .find(|c| c["id"] == id)
            .and_then(|c| c["reward"].as_f64())
            .unwrap()
    };
    let browser = Browser::new();
    let url = |path: &str| {
        let joint = if path.contains('?') { '&' } else { '?' };
        format!("{}{path}{joint}token={TOKEN}", service.url)
    };

    // The job page: counts, one plot of each kind, dropdowns of stored values.
    let page = browser.dump_dom(&url(&format!("/jobs/{job}"))).await;
    assert!(page.contains("<b>27 conversations</b>"), "{page}");
    for title in ["Reward by scenario", "Terminations", "pass^k"] {
        assert!(
            page.contains(&format!("<figcaption><b>{title}</b>")),
            "no {title} plot"
        );
    }
    assert!(page.matches("<svg ").count() >= 3, "{page}");
    let mut terminations: Vec<&str> = stored
        .iter()
        .map(|c| c["termination"].as_str().unwrap())
        .collect();
    terminations.sort();
    terminations.dedup();
    let select = between(&page, "<select name=\"termination\">", "</select>").unwrap();
    for t in &terminations {
        let n = stored.iter().filter(|c| c["termination"] == *t).count();
        assert!(select.contains(&format!("<option value=\"{t}\">{t}</option>")));
        // Its bar says how many ended so.
        assert!(
            page.contains(&format!("<title>{t}: {n} (")),
            "no bar of {n} for {t}"
        );
    }
    let scenarios = between(&page, "<select name=\"scenario\">", "</select>").unwrap();
    assert_eq!(scenarios.matches("<option").count(), 1 + 27);
    for c in &stored {
        let scenario = c["scenario_id"].as_str().unwrap();
        let mean = shown_score(c["reward"].as_f64().unwrap());
        assert!(
            page.contains(&format!("<title>{scenario}: {mean} (n=1)</title>")),
            "no bar of {mean} for {scenario}"
        );
    }

    // Sorting: a click on "reward" puts the best first; a second click, the worst.
    let headers = conversation_headers(&page);
    let by_reward = links_starting_with(headers, &format!("/jobs/{job}?"))
        .into_iter()
        .find(|link| link.contains("sort=reward"))
        .expect("a reward column that sorts");
    let best_first = browser.dump_dom(&url(&by_reward)).await;
    let ids = table_ids(&best_first);
    assert_eq!(ids.len(), 27);
    let rewards: Vec<f64> = ids.iter().map(|&id| reward_of(id)).collect();
    assert!(rewards.windows(2).all(|w| w[0] >= w[1]), "{rewards:?}");
    let again = conversation_headers(&best_first);
    let worst_first_link = links_starting_with(again, &format!("/jobs/{job}?"))
        .into_iter()
        .find(|link| link.contains("sort=reward"))
        .unwrap();
    assert!(worst_first_link.contains("dir=asc") || !worst_first_link.contains("dir="));
    let worst_first = browser.dump_dom(&url(&worst_first_link)).await;
    let rewards: Vec<f64> = table_ids(&worst_first)
        .iter()
        .map(|&id| reward_of(id))
        .collect();
    assert!(rewards.windows(2).all(|w| w[0] <= w[1]), "{rewards:?}");

    // The failed ones, as the form submits them (blank fields and all).
    let failed: Vec<i64> = stored
        .iter()
        .filter(|c| c["reward"].as_f64() == Some(0.0))
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert!(failed.len() >= 2, "the mock failed too few: {stored:?}");
    let filtered = browser
        .dump_dom(&url(&format!(
            "/jobs/{job}?termination=&scenario=&persona=&min_reward=&max_reward=0&min_judge=&drop_flagged=&sort=id&dir=asc"
        )))
        .await;
    assert!(
        filtered.contains(&format!(
            "<b>{} of 27 conversations</b> match the filter",
            failed.len()
        )),
        "{filtered}"
    );
    assert_eq!(table_ids(&filtered), failed);
    // The download link keeps the filter: it downloads those conversations.
    let export = links_starting_with(&filtered, &format!("/v1/jobs/{job}/export?"));
    assert!(export[0].contains("max_reward=0"), "{export:?}");
    let jsonl = service.text(&export[0]).await;
    assert_eq!(jsonl.lines().count(), failed.len(), "{}", export[0]);

    // Previous / next walk the filtered conversations.
    let table = between(&filtered, "<table class=\"conversations\">", "</table>").unwrap();
    let first = links_starting_with(table, "/conversations/")[0].clone();
    assert!(first.contains("max_reward=0"), "{first}");
    let one = browser.dump_dom(&url(&first)).await;
    assert!(
        one.contains(&format!("1 of {} in the filter", failed.len())),
        "{one}"
    );
    assert!(!one.contains("rel=\"prev\""));
    let next = links_starting_with(&one, "/conversations/")
        .into_iter()
        .find(|l| l.starts_with(&format!("/conversations/{}?", failed[1])))
        .expect("a link to the next failed conversation");
    let two = browser.dump_dom(&url(&next)).await;
    assert!(two.contains(&format!("2 of {} in the filter", failed.len())));
    assert!(two.contains("rel=\"prev\""));

    // Each failed conversation says why, in the terms of what failed.
    let mut seen = (0, 0);
    for &id in &failed {
        let detail = service.json(&format!("/v1/conversations/{id}")).await;
        let page = browser
            .dump_dom(&url(&format!("/conversations/{id}")))
            .await;
        let why = between(&page, "<section class=\"why\">", "</section>")
            .unwrap_or_else(|| panic!("conversation {id} does not say why it failed"));
        let breakdown = &detail["reward_breakdown"];
        if breakdown["db"]["score"] == 0.0 {
            seen.0 += 1;
            assert!(why.contains("<tr class=\"first-difference\">"), "{why}");
            assert!(why.contains("State difference (db)"), "{why}");
        }
        if breakdown["communicate"]["score"] == 0.0 {
            seen.1 += 1;
            let missing = breakdown["communicate"]["detail"]
                .as_str()
                .unwrap()
                .trim_start_matches("not said: ")
                .split("; ")
                .next()
                .unwrap()
                .to_string();
            assert!(
                unescape(why).contains(&format!("✗ not said: <b>{missing}</b>")),
                "{why}"
            );
        }
        if seen.0 > 0 && seen.1 > 0 {
            screenshots(&browser, &url(&format!("/conversations/{id}")), "failed").await;
            break;
        }
    }
    assert!(
        seen.0 > 0 && seen.1 > 0,
        "no db and communicate failures: {seen:?}"
    );

    // A malformed filter is a page that says what would be right.
    let bad = browser
        .dump_dom(&url(&format!("/jobs/{job}?min_reward=abc")))
        .await;
    assert!(
        unescape(&bad).contains("min_reward: 'abc' is not a reward; give a number such as 0.5"),
        "{bad}"
    );

    screenshots(&browser, &url(&format!("/jobs/{job}")), "job").await;
}
