//! Parsing on a second thread: a source's items produced ahead, in order, by a
//! scoped producer thread and handed to the consumer in batches through a bounded
//! channel (issue 22 target 2: a trace replay parses on one core while the
//! simulation runs on the other).
//!
//! The consumer sees exactly the sequence the source yields, item for item (errors
//! included, in place), so a run over [`prefetched`] gives the same result as a run
//! over the source itself; only the work of producing the items moves to another
//! thread. At most `DEPTH` batches of `BATCH` items are in flight, so memory stays
//! bounded whatever the trace length; emptied batches go back to the producer, so the
//! steady state allocates nothing.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Items per batch handed from the producer to the consumer.
pub(crate) const BATCH: usize = 2048;

/// Batches the producer may be ahead of the consumer.
pub(crate) const DEPTH: usize = 4;

/// One batch: the source's `Ok` values in order (reversed, so the next is the last),
/// then the `Err` that ended the batch, if one did. Only the values cross between the
/// cores (a `Request` is 32 bytes, a `Result<Request, TraceError>` about 120).
struct Batch<T, E> {
    oks: Vec<T>,
    err: Option<E>,
}

/// The consumer's side: an iterator over the source's items, in order.
pub struct Prefetched<T, E> {
    rx: Receiver<Batch<T, E>>,
    /// Emptied value buffers back to the producer (for reuse).
    back: SyncSender<Vec<T>>,
    cur: Batch<T, E>,
}

impl<T, E> Iterator for Prefetched<T, E> {
    type Item = Result<T, E>;

    #[inline]
    fn next(&mut self) -> Option<Result<T, E>> {
        loop {
            if let Some(v) = self.cur.oks.pop() {
                return Some(Ok(v));
            }
            if let Some(e) = self.cur.err.take() {
                return Some(Err(e));
            }
            let mut next = self.rx.recv().ok()?;
            // Move the values into this thread's own buffer in one copy: a sequential
            // copy streams the producer's cache lines in, where popping them one by one
            // waited on each line (a cross-core miss per other request).
            self.cur.oks.append(&mut next.oks);
            self.cur.err = next.err;
            // A full return channel only means the producer has buffers enough.
            let _ = self.back.try_send(next.oks);
        }
    }
}

/// Run `consume` on an iterator that yields exactly the items of `source`, in order,
/// while a second thread pulls them from `source` up to a few batches ahead.
/// Returns `consume`'s result and `source` as the producer left it (exhausted, unless
/// `consume` stopped early: then the producer stops within a batch).
///
/// A panic of the producer is resumed on the calling thread once `consume` returns.
pub fn prefetched<I, T, E, R>(mut source: I, consume: impl FnOnce(&mut Prefetched<T, E>) -> R) -> (R, I)
where
    I: Iterator<Item = Result<T, E>> + Send,
    T: Send,
    E: Send,
{
    let (tx, rx) = sync_channel::<Batch<T, E>>(DEPTH);
    let (back, spare) = sync_channel::<Vec<T>>(DEPTH + 2);
    std::thread::scope(|scope| {
        let producer = scope.spawn(move || {
            produce(&mut source, &tx, &spare);
            source
        });
        let mut items = Prefetched { rx, back, cur: Batch { oks: Vec::new(), err: None } };
        let r = consume(&mut items);
        // Dropping the receiver makes the producer's next send fail: it stops.
        drop(items);
        match producer.join() {
            Ok(source) => (r, source),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The producer: fill batches from `source` (a batch ends after `BATCH` values or at
/// an error) and send them until the source ends or the consumer is gone.
fn produce<I, T, E>(source: &mut I, tx: &SyncSender<Batch<T, E>>, spare: &Receiver<Vec<T>>)
where
    I: Iterator<Item = Result<T, E>>,
{
    loop {
        let mut oks = spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        oks.clear();
        let (mut err, mut ended) = (None, true);
        for item in source.by_ref() {
            match item {
                Ok(v) => oks.push(v),
                Err(e) => err = Some(e),
            }
            if err.is_some() || oks.len() == BATCH {
                ended = false;
                break;
            }
        }
        oks.reverse();
        let empty = oks.is_empty() && err.is_none();
        if empty || tx.send(Batch { oks, err }).is_err() || ended {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yields_the_source_in_order_across_batches() {
        for n in [0, 1, BATCH - 1, BATCH, BATCH + 1, 3 * BATCH + 7, 20 * BATCH] {
            let (got, mut rest) = prefetched((0..n).map(Ok::<_, ()>), |it| it.collect::<Vec<_>>());
            assert_eq!(got, (0..n).map(Ok).collect::<Vec<_>>(), "n = {n}");
            assert_eq!(rest.next(), None);
        }
    }

    #[test]
    fn a_consumer_that_stops_early_stops_the_producer() {
        let (got, mut rest) = prefetched((0u64..).map(Ok::<_, ()>), |it| it.take(5).collect::<Vec<_>>());
        assert_eq!(got, (0..5).map(Ok).collect::<Vec<_>>());
        // The producer stopped at most DEPTH + 2 batches ahead (in flight, plus the
        // one it was filling when the send failed).
        let next = rest.next().unwrap().unwrap();
        assert!(next >= 5 && next <= ((DEPTH + 3) * BATCH) as u64, "{next}");
    }

    #[test]
    fn errors_come_through_in_place() {
        // Errors anywhere (also back to back, first, last) and Ok values after them.
        for n in [1, 2, 3000, 3 * BATCH + 5] {
            let src =
                (0..n).map(|i| if i % 1000 == 999 || i % 1000 == 998 || i == 0 || i + 1 == n { Err(i) } else { Ok(i) });
            let (got, _) = prefetched(src.clone(), |it| it.collect::<Vec<_>>());
            assert_eq!(got, src.collect::<Vec<_>>(), "n = {n}");
        }
    }

    #[test]
    #[should_panic(expected = "producer failed")]
    fn a_producer_panic_reaches_the_caller() {
        let src = (0..10).map(|i| if i == 3 { panic!("producer failed") } else { Ok::<_, ()>(i) });
        let _ = prefetched(src, |it| it.count());
    }
}
