//! The run loop's look-ahead window: the next requests are read a few ahead so the
//! FTL's table entries can be prefetched — the mapping entry `AHEAD` requests early,
//! the physical page's state two requests after the one served.
//!
//! The window holds the 32-byte `Request`s only, each with its first logical page
//! (computed once for both prefetches). An error from the source ends the
//! filling and waits beside the window: it comes out, in place, once the requests
//! before it have, and nothing after it is read (the run stops at it anyway).

use crate::engine::Engine;
use flashlab_ftl::Mapping;
use flashlab_trace::Request;
use std::collections::VecDeque;

const AHEAD: usize = 12;
const NONE: u64 = u64::MAX;

pub(crate) struct Lookahead<I, E> {
    src: I,
    /// Requests and their first logical page (`NONE`: out of range, no prefetch).
    window: VecDeque<(Request, u64)>,
    err: Option<E>,
    ended: bool,
}

impl<I, E> Lookahead<I, E>
where
    I: Iterator<Item = Result<Request, E>>,
{
    pub(crate) fn new(src: I) -> Self {
        Lookahead { src, window: VecDeque::with_capacity(AHEAD + 1), err: None, ended: false }
    }

    /// The next item of the source, prefetching for the ones after it through `e`.
    #[inline]
    pub(crate) fn next(&mut self, e: &Engine<'_>) -> Option<Result<Request, E>> {
        while self.window.len() <= AHEAD && self.err.is_none() && !self.ended {
            match self.src.next() {
                Some(Ok(r)) => {
                    let lpn = e.first_page(&r).unwrap_or(NONE);
                    if lpn != NONE {
                        e.ftl.prefetch_map(lpn);
                    }
                    self.window.push_back((r, lpn));
                }
                Some(Err(err)) => self.err = Some(err),
                None => self.ended = true,
            }
        }
        match self.window.pop_front() {
            Some((r, _)) => {
                if let Some(&(_, lpn)) = self.window.get(2).filter(|(_, lpn)| *lpn != NONE) {
                    e.ftl.prefetch_page(lpn);
                }
                Some(Ok(r))
            }
            None => self.err.take().map(Err),
        }
    }
}
