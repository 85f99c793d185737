//! The forwarding side of one exchange's analysis: notes what the proxy forwards (the request,
//! the response head, each chunk and when it arrived, how the body ended) for the judging
//! thread ([`judge`](super::judge)), which judges it off the forwarding path. Fail open: a note
//! is a copy into a buffer; nothing here waits on the analysis (only on a full backlog, see
//! [`Config::max_backlog_bytes`](super::Config::max_backlog_bytes)) or changes what is
//! forwarded.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use bytes::Bytes;

use super::judge::Note;
use super::judging::Begun;
use super::shared::Shared;
use crate::request::Headers;
use crate::verdict::End;

/// One exchange being forwarded.
pub struct Tap {
    shared: Arc<Shared>,
    /// The exchange's number in the judge's notes.
    id: u64,
    started: Instant,
    ended: bool,
    finished: bool,
}

impl Tap {
    /// Notes a request about to be forwarded (`url`: the upstream URL with the client's query,
    /// `None` without one).
    pub fn begin(
        shared: Arc<Shared>,
        http_method: &hyper::Method,
        url: Option<String>,
        headers: Headers,
        body: &Bytes,
    ) -> Tap {
        let wall = SystemTime::now();
        let started = Instant::now();
        let id = shared.judge.next_id();
        let begun = Begun {
            method: http_method.clone(),
            url,
            headers,
            body: body.clone(),
            wall,
        };
        shared
            .judge
            .note(Note::Begin { id, begun }, &[], body.len());
        Tap {
            shared,
            id,
            started,
            ended: false,
            finished: false,
        }
    }

    /// The response head arrived.
    pub fn on_head(&mut self, status: u16, headers: Headers) {
        let at = self.started.elapsed();
        let id = self.id;
        let note = Note::Head {
            id,
            status,
            headers,
            at,
        };
        self.shared.judge.note(note, &[], 0);
    }

    /// A chunk of the response body, as forwarded.
    pub fn on_chunk(&mut self, chunk: &[u8]) {
        let at = self.started.elapsed();
        let note = Note::Chunk {
            id: self.id,
            len: chunk.len(),
            at,
        };
        self.shared.judge.note(note, chunk, 0);
    }

    /// The response body ended (`end`, at this moment) and is on its way to the client: the
    /// exchange is judged once the tap is dropped ([`TeeBody`](super::tee::TeeBody) hands it
    /// to the client's connection, which drops it once the last bytes are written).
    pub fn ended(&mut self, end: End) {
        if !self.ended && !self.finished {
            self.ended = true;
            let at = self.started.elapsed();
            self.shared.judge.note(
                Note::Ended {
                    id: self.id,
                    end,
                    at,
                },
                &[],
                0,
            );
        }
    }

    /// The exchange ended: it is judged and handed to the sinks. Later calls do nothing.
    pub fn finish(&mut self, end: End) {
        self.finish_with(end, None);
    }

    /// The upstream gave no response head (`end`: `Reset` when the connection failed or broke
    /// off, `Timeout` past `--upstream-head-timeout`); `cause` goes into the verdict's
    /// `retry.reason`.
    pub fn finish_unanswered(&mut self, end: End, cause: &str) {
        self.finish_with(end, Some(cause.to_owned()));
    }

    fn finish_with(&mut self, end: End, cause: Option<String>) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        let at = self.started.elapsed();
        let held = cause.as_ref().map_or(0, String::len);
        let note = Note::Finish {
            id: self.id,
            end,
            cause,
            at,
        };
        self.shared.judge.note(note, &[], held);
    }
}

impl Drop for Tap {
    /// Judged with the end noted by [`Tap::ended`], or as the client going away (see
    /// [`Judging::dropped`](super::judging::Judging::dropped)).
    fn drop(&mut self) {
        if !self.finished {
            let at = self.started.elapsed();
            self.shared
                .judge
                .note(Note::Dropped { id: self.id, at }, &[], 0);
        }
    }
}
