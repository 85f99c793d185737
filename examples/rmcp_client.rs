//! An rmcp client that gets a verdict for every POST by swapping only its HTTP client.
//!
//! ```text
//! cargo run --example rmcp_client --features rmcp -- http://127.0.0.1:8000/mcp [TOOL [JSON_ARGS]]
//! ```
//!
//! Connects (2026-07-28 `server/discover`, falling back to a 2025-11-25 `initialize`), lists the
//! tools, optionally calls one, and prints each verdict as a JSON line on standard output as it
//! arrives (the verdict's `index` orders them: they come when bodies end). What rmcp itself
//! returned goes to standard error. Exits 2 when it cannot connect, else 0.

use std::process::ExitCode;
use std::time::Duration;

use mcp_verdict::adapters::rmcp::VerdictHttpClient;
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};

async fn connect(
    http: &VerdictHttpClient,
    url: &str,
) -> Result<RunningService<RoleClient, ClientConfig>, String> {
    let transport = |http: VerdictHttpClient| {
        StreamableHttpClientTransport::with_client(
            http,
            StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
        )
    };
    let auto = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    match ClientConfig::default()
        .serve_with_lifecycle(transport(http.clone()), auto)
        .await
    {
        Ok(client) => Ok(client),
        Err(e) => {
            // rmcp's Auto mode does not fall back when the server lists only 2025 versions in
            // its unsupported-version error; an explicit initialize does.
            eprintln!("discover failed ({e}); trying initialize");
            ClientConfig::default()
                .with_protocol_version(ProtocolVersion::V_2025_11_25)
                .serve_with_lifecycle(transport(http.clone()), ClientLifecycleMode::Initialize)
                .await
                .map_err(|e| e.to_string())
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(url) = args.next() else {
        eprintln!("usage: rmcp_client URL [TOOL [JSON_ARGS]]");
        return ExitCode::from(2);
    };
    let tool = args.next();
    let tool_args = match args.next().map(|a| serde_json::from_str(&a)) {
        None => None,
        Some(Ok(serde_json::Value::Object(map))) => Some(map),
        Some(_) => {
            eprintln!("JSON_ARGS must be a JSON object");
            return ExitCode::from(2);
        }
    };

    let (http, mut verdicts) = VerdictHttpClient::channel(reqwest::Client::new());
    let printer = tokio::spawn(async move {
        while let Some(v) = verdicts.recv().await {
            println!("{}", serde_json::to_string(&v).unwrap_or_default());
        }
    });

    let client = match connect(&http, &url).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cannot connect: {e}");
            return ExitCode::from(2);
        }
    };
    match client.list_all_tools().await {
        Ok(tools) => eprintln!(
            "tools: {}",
            tools
                .iter()
                .map(|t| t.name.as_ref())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(e) => eprintln!("tools/list: {e}"),
    }
    if let Some(name) = tool {
        let mut params = CallToolRequestParams::new(name.clone());
        if let Some(a) = tool_args {
            params = params.with_arguments(a);
        }
        match client.call_tool(params).await {
            Ok(result) => eprintln!("{name}: isError={:?}", result.is_error),
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
    // Give the last stream a moment to end (rmcp stops reading shortly after a response).
    tokio::time::sleep(Duration::from_millis(200)).await;
    if let Err(e) = client.cancel().await {
        eprintln!("close: {e}");
    }
    // The channel closes once every clone of the HTTP client is gone; bodies still being read
    // in the background get a moment to finish.
    drop(http);
    let _ = tokio::time::timeout(Duration::from_secs(2), printer).await;
    ExitCode::SUCCESS
}
