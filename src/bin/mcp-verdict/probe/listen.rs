//! The standalone `GET` stream of a 2025-x session, open while probe calls tools: a server
//! sends the requests that belong to no response stream there (an SDK server's elicitation
//! from inside a tool, often), and a client that never listens leaves them unanswered. Probe
//! answers each as it would on a response stream; the `GET`'s own verdict (`LISTENING`, or
//! `METHOD_NOT_ALLOWED` from a server without one) is a row like the others.

use mcp_verdict::adapters::{Call, Client};
use tokio::sync::oneshot;

use super::{Conduct, MAX_ANSWERS, Measured, answer_request};

/// Reads `call` (the open `GET`) until the server ends it or `stop` fires (or is dropped),
/// answering server requests; gives its verdict first, then the answers'.
pub(super) async fn run(
    client: &Client,
    mut call: Call,
    conduct: Conduct,
    mut stop: oneshot::Receiver<()>,
) -> Vec<(mcp_verdict::Verdict, Measured)> {
    let mut answered = Vec::new();
    loop {
        tokio::select! {
            m = call.next_message() => match m {
                None => break,
                Some(m) => {
                    if answered.len() < MAX_ANSWERS
                        && let Some(row) = answer_request(client, &m, conduct).await
                    {
                        answered.push(row);
                    }
                }
            },
            _ = &mut stop => break,
        }
    }
    let (verdict, _) = call.finish_unless(std::future::ready(())).await;
    let mut rows = vec![(verdict, None)];
    rows.append(&mut answered);
    rows
}
