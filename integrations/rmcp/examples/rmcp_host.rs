//! An MCP host on rmcp, with mcp-stdio's transport: spawns a server,
//! does the handshake, lists the tools, optionally calls one, prints,
//! closes. Exit status 0 on success; 1 with the reason otherwise.
//!
//! ```sh
//! cargo run --release --example rmcp_host -- [--call TOOL JSON] [--tokio] COMMAND [ARGS...]
//! ```
//!
//! `--tokio` uses rmcp's own `TokioChildProcess` instead (the one line a
//! host changes), for comparison.
//!
//! Output, one item per line: `server: <name> <version>`, `tool: <name>`
//! for each tool, `result: <JSON>` for the call; the server's stderr
//! lines go to ours, prefixed `rmcp_host: [server] `.

use std::process::ExitCode;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

struct Args {
    call: Option<(String, serde_json::Map<String, serde_json::Value>)>,
    tokio: bool,
    command: Vec<String>,
}

fn parse() -> Result<Args, String> {
    let mut args = std::env::args().skip(1).peekable();
    let mut parsed = Args {
        call: None,
        tokio: false,
        command: Vec::new(),
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--call" => {
                let (Some(tool), Some(json)) = (args.next(), args.next()) else {
                    return Err("--call needs TOOL and JSON".into());
                };
                let json = match serde_json::from_str(&json) {
                    Ok(serde_json::Value::Object(map)) => map,
                    _ => return Err(format!("--call {tool}: not a JSON object: {json}")),
                };
                parsed.call = Some((tool, json));
            }
            "--tokio" => parsed.tokio = true,
            "--" => {
                parsed.command.extend(args.by_ref());
            }
            _ => {
                parsed.command.push(arg);
                parsed.command.extend(args.by_ref());
            }
        }
    }
    if parsed.command.is_empty() {
        return Err("usage: rmcp_host [--call TOOL JSON] [--tokio] COMMAND [ARGS...]".into());
    }
    Ok(parsed)
}

async fn connect(args: &Args) -> Result<RunningService<RoleClient, ()>, BoxError> {
    let mut cmd = tokio::process::Command::new(&args.command[0]);
    cmd.args(&args.command[1..]);
    if args.tokio {
        let transport = rmcp::transport::TokioChildProcess::new(cmd)?;
        return Ok(().serve(transport).await?);
    }
    let transport = mcp_stdio_rmcp::ChildProcess::builder(cmd)
        .stderr(|line| eprintln!("rmcp_host: [server] {}", String::from_utf8_lossy(line)))
        .spawn()?;
    Ok(().serve(transport).await?)
}

async fn session(args: &Args) -> Result<(), BoxError> {
    let client = connect(args).await?;
    if let Some(info) = client.peer_info() {
        let info = serde_json::to_value(&*info)?;
        let server = info
            .pointer("/serverInfo")
            .or_else(|| info.pointer("/_meta/io.modelcontextprotocol~1serverInfo"))
            .cloned()
            .unwrap_or_default();
        println!("server: {} {}", server["name"], server["version"]);
    }
    let result = async {
        for tool in client.list_all_tools().await? {
            println!("tool: {}", tool.name);
        }
        if let Some((tool, arguments)) = &args.call {
            let params = CallToolRequestParams::new(tool.clone()).with_arguments(arguments.clone());
            let result = client.call_tool(params).await?;
            println!("result: {}", serde_json::to_string(&result)?);
            if result.is_error == Some(true) {
                return Err(format!("the tool {tool} reported an error").into());
            }
        }
        Ok::<(), BoxError>(())
    }
    .await;
    client.cancel().await?; // the transport's close: the shutdown, awaited
    result
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(usage) => {
            eprintln!("rmcp_host: {usage}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(session(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rmcp_host: {e}");
            ExitCode::FAILURE
        }
    }
}
