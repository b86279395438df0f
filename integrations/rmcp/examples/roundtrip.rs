//! Round trips of rmcp's client over this crate's transport against rmcp's
//! own `TokioChildProcess`: the same server (examples/rmcp_server.rs on
//! rmcp's own stdio), the same calls (`tools/list`, one at a time),
//! alternated in one run so that the machine's drift hits both alike.
//!
//! ```sh
//! cargo build --release --examples && ./target/release/examples/roundtrip [ROUNDS] [CALLS] [ours|theirs]
//! ```
//!
//! Prints each round's median round trip per transport, then the median
//! of the rounds' medians and the ratio (rmcp's time over ours: above 1,
//! ours is faster).

use std::time::{Duration, Instant};

use rmcp::ServiceExt;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn round(ours: bool, calls: usize) -> Result<Duration, BoxError> {
    let server = std::env::current_exe()?.with_file_name("rmcp_server");
    let mut cmd = tokio::process::Command::new(server);
    cmd.arg("--rmcp-stdio");
    let client = if ours {
        ().serve(mcp_stdio_rmcp::ChildProcess::new(cmd)?).await?
    } else {
        ().serve(rmcp::transport::TokioChildProcess::new(cmd)?)
            .await?
    };
    for _ in 0..calls / 10 {
        client.list_all_tools().await?; // warm up
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        client.list_all_tools().await?;
        times.push(started.elapsed());
    }
    client.cancel().await?;
    Ok(median(times))
}

fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(Ok(6), |a| a.parse())?;
    let calls: usize = args.next().map_or(Ok(2000), |a| a.parse())?;
    // `ours` or `theirs`: only that transport (to profile one).
    let only = args.next();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        // Alternated, and the order swapped each round.
        for first_ours in [r % 2 == 0, r % 2 != 0] {
            if only.as_deref().is_some_and(|o| (o == "ours") != first_ours) {
                continue;
            }
            let m = runtime.block_on(round(first_ours, calls))?;
            let name = if first_ours {
                "mcp-stdio"
            } else {
                "TokioChildProcess"
            };
            println!(
                "round {r}: {name:>17} median {:>6.1} us",
                m.as_secs_f64() * 1e6
            );
            if first_ours {
                ours.push(m)
            } else {
                theirs.push(m)
            }
        }
    }
    if only.is_some() {
        return Ok(());
    }
    let (o, t) = (median(ours), median(theirs));
    println!(
        "median of {rounds} rounds x {calls} tools/list: mcp-stdio {:.1} us, TokioChildProcess {:.1} us, ratio (theirs / ours) {:.3}",
        o.as_secs_f64() * 1e6,
        t.as_secs_f64() * 1e6,
        t.as_secs_f64() / o.as_secs_f64()
    );
    Ok(())
}
