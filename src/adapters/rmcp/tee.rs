//! The SSE tee: one framing of the body serves both the exchange being judged and rmcp's
//! stream of [`Sse`] items.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures_core::Stream;
use rmcp::transport::streamable_http_client::SseError;
use sse_stream::Sse;

use super::lossy;
use crate::adapters::body::JudgedBody;
use crate::adapters::client::BodyStream;
use crate::adapters::lock;
use crate::sse::{SseEvent, SseFramer, SseSink};
use crate::verdict::End;

/// SSE events for rmcp, framed by [`SseFramer`], waiting to be polled.
#[derive(Default)]
pub(super) struct SseQueue {
    pub(super) items: VecDeque<Result<Sse, SseError>>,
    pub(super) end: Option<End>,
    pub(super) failed: bool,
}

/// Frames a body into rmcp's [`Sse`] items. Blocks that set an id or a retry without
/// dispatching an event (WHATWG) still reach rmcp, as items without data, so that its
/// `Last-Event-ID` and reconnect delay are what its own parser would give.
pub(super) struct SseTee {
    pub(super) framer: SseFramer,
    pub(super) max_event_bytes: usize,
    pub(super) retry: Option<u64>,
    pub(super) reported_id: Option<Vec<u8>>,
    pub(super) queue: Arc<Mutex<SseQueue>>,
}

impl SseTee {
    pub(super) fn new(max_event_bytes: usize, queue: Arc<Mutex<SseQueue>>) -> Self {
        SseTee {
            framer: SseFramer::new(max_event_bytes),
            max_event_bytes,
            retry: None,
            reported_id: None,
            queue,
        }
    }

    pub(super) fn feed(&mut self, chunk: &[u8]) {
        let mut queue = lock(&self.queue);
        if queue.failed {
            return;
        }
        let mut sink = TeeSink {
            items: &mut queue.items,
            retry: &mut self.retry,
            reported_id: &mut self.reported_id,
        };
        if self.framer.feed(chunk, &mut sink).is_err() {
            queue.failed = true;
            queue
                .items
                .push_back(Err(SseError::Body(Box::new(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "SSE event exceeded the maximum size of {} bytes",
                        self.max_event_bytes
                    ),
                )))));
            return;
        }
        let id = self.framer.last_event_id();
        if id != self.reported_id.as_deref() || self.retry.is_some() {
            queue.items.push_back(Ok(Sse {
                event: None,
                data: None,
                id: id.map(lossy),
                retry: self.retry.take(),
            }));
            self.reported_id = id.map(<[u8]>::to_vec);
        }
    }
}

pub(super) struct TeeSink<'a> {
    pub(super) items: &'a mut VecDeque<Result<Sse, SseError>>,
    pub(super) retry: &'a mut Option<u64>,
    pub(super) reported_id: &'a mut Option<Vec<u8>>,
}

impl SseSink for TeeSink<'_> {
    fn on_event(&mut self, ev: &SseEvent<'_>) {
        let id = if ev.has_id_field {
            *self.reported_id = ev.last_event_id.map(<[u8]>::to_vec);
            ev.last_event_id.map(lossy)
        } else {
            None
        };
        self.items.push_back(Ok(Sse {
            event: (!ev.event_type.is_empty()).then(|| lossy(ev.event_type)),
            data: Some(lossy(ev.data)),
            id,
            retry: self.retry.take(),
        }));
    }

    fn on_retry(&mut self, ms: u64, _offset: u64) {
        *self.retry = Some(ms);
    }
}

/// The SSE stream rmcp reads: framed events, then (if the body broke) an error so that rmcp
/// resumes the way it would with its own parser.
pub(super) struct JudgedSse {
    pub(super) judged: Option<JudgedBody<BodyStream>>,
    pub(super) queue: Arc<Mutex<SseQueue>>,
}

impl Stream for JudgedSse {
    type Item = Result<Sse, SseError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = lock(&this.queue).items.pop_front() {
                return Poll::Ready(Some(item));
            }
            let Some(judged) = this.judged.as_mut() else {
                return Poll::Ready(None);
            };
            match Pin::new(judged).poll_next(cx) {
                Poll::Ready(Some(_)) => {}
                Poll::Ready(None) => {
                    this.judged = None;
                    let mut queue = lock(&this.queue);
                    if let Some(error) = end_error(queue.end) {
                        queue.items.push_back(Err(error));
                    }
                }
                Poll::Pending => {
                    if lock(&this.queue).items.is_empty() {
                        return Poll::Pending;
                    }
                }
            }
        }
    }
}

pub(super) fn end_error(end: Option<End>) -> Option<SseError> {
    let (kind, text) = match end? {
        End::Reset => (
            std::io::ErrorKind::ConnectionReset,
            "the event stream broke off",
        ),
        End::Timeout => (
            std::io::ErrorKind::TimedOut,
            "the event stream passed its deadline",
        ),
        End::Eof | End::Open | End::Cancelled | End::NotCaptured => return None,
    };
    Some(SseError::Body(Box::new(std::io::Error::new(kind, text))))
}
