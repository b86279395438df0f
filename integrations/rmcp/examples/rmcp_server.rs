//! An MCP server on rmcp, served with mcp-stdio's stdio transport (the
//! stdout guard on): the one line a server changes is the transport.
//!
//! Tools: `echo(text)` returns the text; `stray_print()` writes a line
//! with `println!`, which the guard sends to stderr instead of corrupting
//! the stream, and returns "printed".
//!
//! `--rmcp-stdio`: served on rmcp's own `transport::stdio()` instead (the
//! round-trip benchmark's server, so that only the client's transport
//! differs between the runs it compares).

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router, ServiceExt};
use serde::Deserialize;

struct Server;

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoParams {
    /// The text to send back.
    text: String,
}

#[tool_router(server_handler)]
impl Server {
    #[tool(description = "Returns the text unchanged")]
    fn echo(&self, Parameters(EchoParams { text }): Parameters<EchoParams>) -> String {
        text
    }

    #[tool(description = "Writes a line to stdout with println!, then returns \"printed\"")]
    fn stray_print(&self) -> String {
        println!("a stray print: the stdout guard sends it to stderr");
        "printed".into()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--rmcp-stdio") {
        let running = Server.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        return Ok(());
    }
    // Was: Server.serve(rmcp::transport::stdio()).await?
    let running = Server.serve(mcp_stdio_rmcp::stdio()?).await?;
    running.waiting().await?;
    Ok(())
}
