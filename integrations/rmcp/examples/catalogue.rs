//! The failure catalogue: the same rmcp client code on three transports
//! against servers that misbehave, measured (Linux).
//!
//! ```sh
//! cargo run --release --example catalogue            # every case, a Markdown table
//! cargo run --release --example catalogue -- --json  # the same, one JSON object a row
//! ```
//!
//! Transports: `mcp-stdio` (this crate's `ChildProcess`), `rmcp` (rmcp's
//! `TokioChildProcess::new(cmd)`, as most hosts use it: stderr inherited),
//! `rmcp+group` (the same with `process-wrap`'s `ProcessGroup::leader()`,
//! rmcp's own way to a process group), `rmcp+piped` (stderr piped, as a
//! host that shows it later does, and not read meanwhile). Each case runs in a process of its
//! own (this program, `--one CASE TRANSPORT`), so that its peak memory is
//! its own: the host connects (the handshake), lists the tools, and closes
//! (`RunningService::cancel`, which closes the transport), each step
//! bounded by 15 s. Then every process the server started, found by a
//! marker in its environment, that still runs 1 s after the close is
//! counted as left behind, and killed.
//!
//! A row: what the host's error said (or "ok"), the time from `cancel` to
//! its return, the processes left behind, and the host's peak resident
//! memory (`VmHWM`).

use std::io::Write;
use std::time::{Duration, Instant};

use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A stand-in MCP server in sh: answers `initialize` and `tools/list`
/// after running `at_start`, and runs `at_end` when its stdin ends.
fn stand_in(at_start: &str, at_end: &str) -> String {
    format!(
        r#"{at_start}
        while IFS= read -r line; do
          id=$(printf '%s' "$line" | sed -n 's/^{{"jsonrpc":"2.0","id":\([0-9][0-9]*\).*/\1/p')
          case "$line" in
          *'"method":"initialize"'*) echo '{{"jsonrpc":"2.0","id":'$id',"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"stand-in","version":"1"}}}}}}' ;;
          *'"method":"tools/list"'*) echo '{{"jsonrpc":"2.0","id":'$id',"result":{{"tools":[]}}}}' ;;
          esac
        done
        {at_end}"#
    )
}

/// The cases: a name, what it shows, and the command.
fn cases() -> Vec<(&'static str, &'static str, Vec<String>)> {
    let sh = |script: String| vec!["sh".to_owned(), "-c".to_owned(), script];
    // A server that outlives its stdin's end for a while (a node server
    // with timers): what a launcher's grandchild does.
    let lingering = stand_in("", "sleep 300");
    vec![
        (
            "grandchild",
            "a launcher (`sh -c 'server'`) whose child, the server, holds the pipes and outlives its stdin",
            sh(format!("sh -c '{}'; echo launcher done", lingering.replace('\'', "'\\''"))),
        ),
        (
            "ignores-sigterm",
            "a server that ignores SIGTERM and outlives its stdin",
            sh(stand_in("trap '' TERM", "sleep 300")),
        ),
        (
            "stderr-flood",
            "8 MiB on stderr before its first answer",
            sh(stand_in(
                "head -c 8388608 /dev/zero | tr '\\0' 'e' | fold -w 1000 >&2",
                "",
            )),
        ),
        (
            "dies-at-once",
            "exits at once, saying why on stderr",
            sh("echo \"ModuleNotFoundError: No module named 'foo'\" >&2; exit 1".to_owned()),
        ),
        (
            "100MB-line",
            "a 100 MB line on stdout before its first answer",
            sh(stand_in(
                "head -c 100000000 /dev/zero | tr '\\0' 'x'; echo",
                "",
            )),
        ),
        (
            "junk-line",
            "a line of junk on stdout before its first answer",
            sh(stand_in("echo 'Loading config from /etc/thing...'", "")),
        ),
    ]
}

const TRANSPORTS: [&str; 4] = ["mcp-stdio", "rmcp", "rmcp+group", "rmcp+piped"];
const STEP: Duration = Duration::from_secs(15);

/// One row, as the child process reports it (`close_ms`: `None` when no
/// session began, `u128::MAX` when the close did not return in 15 s).
#[derive(serde::Serialize, serde::Deserialize)]
struct Row {
    case: String,
    transport: String,
    outcome: String,
    close_ms: Option<u128>,
    left_behind: usize,
    peak_rss_kib: u64,
}

fn marker() -> String {
    format!("MCP_STDIO_CATALOGUE={}", std::process::id())
}

async fn connect(
    transport: &str,
    argv: &[String],
) -> Result<RunningService<RoleClient, ()>, BoxError> {
    let mut cmd = tokio::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    let (name, value) = marker()
        .split_once('=')
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .unwrap();
    cmd.env(name, value);
    match transport {
        "mcp-stdio" => Ok(().serve(mcp_stdio_rmcp::ChildProcess::new(cmd)?).await?),
        "rmcp" => Ok(
            ().serve(rmcp::transport::TokioChildProcess::new(cmd)?)
                .await?,
        ),
        "rmcp+piped" => {
            // stderr captured for later and not read (yet): the pipe fills.
            let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::piped())
                .spawn()?;
            std::mem::forget(stderr); // held open, never read
            Ok(().serve(transport).await?)
        }
        "rmcp+group" => {
            use process_wrap::tokio::{CommandWrap, ProcessGroup};
            let mut wrap = CommandWrap::from(cmd);
            wrap.wrap(ProcessGroup::leader());
            Ok(
                ().serve(rmcp::transport::TokioChildProcess::new(wrap)?)
                    .await?,
            )
        }
        other => Err(format!("no transport {other}").into()),
    }
}

/// The live processes whose environment holds our marker.
fn marked() -> Vec<u32> {
    let want = marker();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let live = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rfind(')')
                    .and_then(|at| stat[at + 1..].trim_start().chars().next())
                    .is_some_and(|s| s != 'Z' && s != 'X')
            });
            live && std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == want.as_bytes()))
        })
        .collect()
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// One case on one transport, in this process.
async fn one(case: &str, transport: &str) -> Row {
    let argv = cases()
        .into_iter()
        .find(|(name, _, _)| *name == case)
        .map(|(_, _, argv)| argv)
        .expect("a known case");
    let mut close_ms = None;
    let mut session = false;
    let outcome = match tokio::time::timeout(STEP, connect(transport, &argv)).await {
        Err(_) => "hung: no handshake in 15 s".to_owned(),
        Ok(Err(e)) => format!("error: {e}"),
        Ok(Ok(client)) => {
            session = true;
            let listed = tokio::time::timeout(STEP, client.list_all_tools()).await;
            let outcome = match listed {
                Err(_) => "hung: no tools/list answer in 15 s".to_owned(),
                Ok(Err(e)) => format!("error: {e}"),
                Ok(Ok(_)) => "ok".to_owned(),
            };
            let closing = Instant::now();
            // Not closed in 15 s: no time.
            if tokio::time::timeout(STEP, client.cancel()).await.is_ok() {
                close_ms = Some(closing.elapsed().as_millis());
            }
            outcome
        }
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let left = marked();
    for pid in &left {
        // SAFETY: a plain kill(2) of a process this case started.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    Row {
        case: case.to_owned(),
        transport: transport.to_owned(),
        outcome: outcome.replace('\n', " "),
        close_ms: if session {
            close_ms.or(Some(u128::MAX))
        } else {
            None
        },
        left_behind: left.len(),
        peak_rss_kib: peak_rss_kib(),
    }
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--one") {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let row = runtime.block_on(one(&args[1], &args[2]));
        println!("{}", serde_json::to_string(&row)?);
        // Whatever a transport left to the runtime is not waited for.
        runtime.shutdown_timeout(Duration::from_millis(100));
        return Ok(());
    }
    let json = args.first().map(String::as_str) == Some("--json");
    let me = std::env::current_exe()?;
    if !json {
        println!("| case | transport | what the host got | close | left behind | peak RSS |");
        println!("|---|---|---|---:|---:|---:|");
    }
    for (case, _, _) in cases() {
        for transport in TRANSPORTS {
            let out = std::process::Command::new(&me)
                .args(["--one", case, transport])
                .stderr(std::process::Stdio::null()) // rmcp's inherited stderr floods
                .output()?;
            let line = String::from_utf8_lossy(&out.stdout);
            let row: Row = serde_json::from_str(line.trim())
                .map_err(|e| format!("{case} {transport}: {e}: {line}"))?;
            if json {
                println!("{}", line.trim());
            } else {
                let mut outcome = row.outcome.clone();
                if outcome.chars().count() > 160 {
                    outcome = outcome.chars().take(157).collect::<String>() + "...";
                }
                println!(
                    "| {} | {} | {} | {} | {} | {} MiB |",
                    row.case,
                    row.transport,
                    outcome.replace('|', "\\|"),
                    match row.close_ms {
                        None => "no session".to_owned(),
                        Some(u128::MAX) => "not in 15 s".to_owned(),
                        Some(ms) => format!("{ms} ms"),
                    },
                    row.left_behind,
                    row.peak_rss_kib / 1024
                );
            }
            std::io::stdout().flush()?;
        }
    }
    Ok(())
}
