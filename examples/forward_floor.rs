//! The floor of a forwarder on this stack: a single-threaded tokio HTTP/1.1 forwarder that
//! judges nothing, copies no headers (the request goes upstream byte for byte), allocates two
//! buffers per connection and nothing per request, and frames replies only as far as it must to
//! find their end (`Content-Length` or the chunked framing, passed through as sent).
//!
//! Not a product: a measuring stick for `benches/proxy-vs-nginx.sh` (`FLOOR=1`), so that the
//! gap between `mcp-verdict proxy` and nginx splits into what the judging and hyper cost and
//! what any tokio forwarder costs. No TLS, no refusals, no timeouts; a malformed message closes
//! the connection.
//!
//! `cargo run --release --example forward_floor -- LISTEN UPSTREAM` (both `host:port`).

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn main() -> io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(upstream)) = (args.next(), args.next()) else {
        eprintln!("usage: forward_floor LISTEN UPSTREAM (host:port each)");
        std::process::exit(2);
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    rt.block_on(async move {
        let listener = TcpListener::bind(&listen).await?;
        let upstream: &'static str = Box::leak(upstream.into_boxed_str());
        loop {
            let (client, _) = listener.accept().await?;
            let _ = client.set_nodelay(true);
            tokio::spawn(async move {
                let _ = serve(client, upstream).await;
            });
        }
    })
}

const BUF: usize = 16 << 10;

fn broken(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// Reads into `buf` past its `len` filled bytes; `Ok(false)` at the peer's end.
async fn fill(sock: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<bool> {
    if buf.capacity() - buf.len() < 4096 {
        buf.reserve(BUF);
    }
    Ok(sock.read_buf(buf).await? > 0)
}

fn content_length(headers: &[httparse::Header<'_>]) -> Option<Option<usize>> {
    let mut chunked = false;
    let mut length = None;
    for h in headers {
        if h.name.eq_ignore_ascii_case("content-length") {
            length = std::str::from_utf8(h.value).ok()?.trim().parse().ok();
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = true;
        }
    }
    // Some(Some(n)): n bytes; Some(None): chunked.
    if chunked {
        Some(None)
    } else {
        Some(Some(length.unwrap_or(0)))
    }
}

async fn serve(mut client: TcpStream, upstream: &str) -> io::Result<()> {
    let mut up: Option<TcpStream> = None;
    let mut cbuf = Vec::with_capacity(BUF);
    let mut ubuf = Vec::with_capacity(BUF);
    let mut out = Vec::with_capacity(BUF);
    loop {
        // The request head, then its body (Content-Length only).
        let (head, body) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut req = httparse::Request::new(&mut headers);
            match req.parse(&cbuf).map_err(|_| broken("request"))? {
                httparse::Status::Complete(n) => {
                    let Some(Some(len)) = content_length(req.headers) else {
                        return Err(broken("chunked request"));
                    };
                    // The head as the upstream wants it: its own Host (as nginx's
                    // `proxy_set_header Host`), everything else as sent.
                    out.clear();
                    let line_end = cbuf.iter().position(|&b| b == b'\n').unwrap_or(0) + 1;
                    out.extend_from_slice(&cbuf[..line_end]);
                    for h in req.headers.iter() {
                        if h.name.eq_ignore_ascii_case("host") {
                            continue;
                        }
                        out.extend_from_slice(h.name.as_bytes());
                        out.extend_from_slice(b": ");
                        out.extend_from_slice(h.value);
                        out.extend_from_slice(b"\r\n");
                    }
                    out.extend_from_slice(b"host: ");
                    out.extend_from_slice(upstream.as_bytes());
                    out.extend_from_slice(b"\r\n\r\n");
                    break (n, len);
                }
                httparse::Status::Partial => {
                    if !fill(&mut client, &mut cbuf).await? {
                        return Ok(());
                    }
                }
            }
        };
        while cbuf.len() < head + body {
            if !fill(&mut client, &mut cbuf).await? {
                return Ok(());
            }
        }
        let sock = match &mut up {
            Some(s) => s,
            None => {
                let s = TcpStream::connect(upstream).await?;
                let _ = s.set_nodelay(true);
                up.insert(s)
            }
        };
        out.extend_from_slice(&cbuf[head..head + body]);
        sock.write_all(&out).await?;
        cbuf.drain(..head + body);
        // The reply head, then its body as it comes.
        ubuf.clear();
        let (head, framing) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut resp = httparse::Response::new(&mut headers);
            match resp.parse(&ubuf).map_err(|_| broken("response"))? {
                httparse::Status::Complete(n) => {
                    break (
                        n,
                        content_length(resp.headers).ok_or_else(|| broken("length"))?,
                    );
                }
                httparse::Status::Partial => {
                    if !fill(sock, &mut ubuf).await? {
                        return Err(broken("upstream closed"));
                    }
                }
            }
        };
        match framing {
            Some(len) => pass_rest(sock, &mut client, &mut ubuf, head + len).await?,
            None => {
                let mut chunks = Chunks::default();
                let mut from = head;
                loop {
                    let done = chunks.scan(&ubuf[from..])?;
                    client.write_all(&ubuf).await?;
                    if done {
                        break;
                    }
                    ubuf.clear();
                    from = 0;
                    if sock.read_buf(&mut ubuf).await? == 0 {
                        return Err(broken("upstream closed"));
                    }
                }
            }
        }
    }
}

async fn pass_rest(
    sock: &mut TcpStream,
    client: &mut TcpStream,
    buf: &mut Vec<u8>,
    mut left: usize,
) -> io::Result<()> {
    loop {
        let n = buf.len().min(left);
        client.write_all(&buf[..n]).await?;
        left -= n;
        if left == 0 {
            return Ok(());
        }
        buf.clear();
        if sock.read_buf(buf).await? == 0 {
            return Err(broken("upstream closed"));
        }
    }
}

/// Where the chunked framing stands, fed piece by piece: `true` once the last chunk and the
/// empty trailer line are through.
struct Chunks {
    state: State,
}

impl Default for Chunks {
    fn default() -> Self {
        Chunks {
            state: State::Size(0),
        }
    }
}

#[derive(Clone, Copy)]
enum State {
    Size(usize),
    SizeLine(usize),
    Data(usize),
    DataCr,
    DataLf,
    Trailer,
    TrailerLf,
    Done,
}

impl Chunks {
    fn scan(&mut self, bytes: &[u8]) -> io::Result<bool> {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            self.state = match self.state {
                State::Size(size) => match (b as char).to_digit(16) {
                    Some(d) if size < usize::MAX >> 4 => State::Size(size * 16 + d as usize),
                    None if b == b'\r' || b == b';' => State::SizeLine(size),
                    _ => return Err(broken("chunk size")),
                },
                State::SizeLine(0) if b == b'\n' => State::Trailer,
                State::SizeLine(size) if b == b'\n' => State::Data(size),
                State::SizeLine(size) => State::SizeLine(size),
                State::Data(n) => {
                    let take = n.min(bytes.len() - i);
                    i += take;
                    self.state = if take == n {
                        State::DataCr
                    } else {
                        State::Data(n - take)
                    };
                    continue;
                }
                State::DataCr if b == b'\r' => State::DataLf,
                State::DataLf if b == b'\n' => State::Size(0),
                State::Trailer if b == b'\r' => State::TrailerLf,
                State::TrailerLf if b == b'\n' => State::Done,
                _ => return Err(broken("chunk framing")),
            };
            i += 1;
        }
        Ok(matches!(self.state, State::Done))
    }
}
