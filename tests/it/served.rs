//! `sparring serve`, the binary, as a client meets it: started over a data
//! root with a token, reached over real HTTP, killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The token every [`Served`] is started with (`SPARRING_API_TOKEN`).
pub const TOKEN: &str = "s3cret-token-of-the-operator-7f3a9c";

/// `sparring serve` (the binary) over `root` with the token in
/// `SPARRING_API_TOKEN` and `args`; killed when dropped.
pub struct Served {
    child: Child,
    pub url: String,
    client: reqwest::Client,
}

impl Served {
    pub fn start(root: &Path, args: &[String]) -> Served {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut child = serve_command(root, args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (lines, said) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let started = Instant::now();
        let url = loop {
            let line = said
                .recv_timeout(Duration::from_secs(30))
                .expect("sparring serve said nothing");
            if line.contains("serving on") {
                break line
                    .split_whitespace()
                    .find(|w| w.starts_with("http://"))
                    .unwrap()
                    .to_string();
            }
            assert!(started.elapsed() < Duration::from_secs(30), "{line}");
        };
        Served {
            child,
            url,
            client: reqwest::Client::new(),
        }
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .get(format!("{}{path}", self.url))
            .bearer_auth(TOKEN)
    }

    pub async fn post(&self, path: &str, content_type: &str, body: String) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.url))
            .bearer_auth(TOKEN)
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
        (status, value)
    }

    pub async fn submit(&self, config: String) -> (u16, Value) {
        self.post("/v1/jobs", "application/toml", config).await
    }

    pub async fn job(&self, id: i64) -> Value {
        let response = self.get(&format!("/v1/jobs/{id}")).send().await.unwrap();
        assert_eq!(response.status(), 200);
        response.json().await.unwrap()
    }

    /// Poll job `id` until it is no longer pending or running here.
    pub async fn wait(&self, id: i64) -> Value {
        let started = Instant::now();
        loop {
            let view = self.job(id).await;
            let status = view["status"].as_str().unwrap_or("").to_string();
            if !["pending", "running"].contains(&status.as_str()) && view["running_here"] == false {
                return view;
            }
            assert!(started.elapsed() < Duration::from_secs(120), "{view}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn serve_command(root: &Path, args: &[String]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sparring"));
    command
        .args(["serve", "--bind", "127.0.0.1:0", "--database"])
        .arg(format!("sqlite://{}", root.join("service.db").display()))
        .arg("--data-root")
        .arg(root)
        .args(args)
        .current_dir(root)
        .env("SPARRING_API_TOKEN", TOKEN)
        .env_remove("SPARRING_DATABASE");
    command
}

/// The errors of job `id`'s failed items in the SQLite file `db`.
pub async fn stored_errors(db: &Path, id: i64) -> Vec<String> {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    sqlx::query_scalar("SELECT last_error FROM items WHERE job_id = ? AND status = 'failed'")
        .bind(id)
        .fetch_all(&pool)
        .await
        .unwrap()
}
