//! Group commit: requests for the same thing, applied together in one transaction.
//!
//! Concurrent requests that write the same row (one gift card, one quota) would each wait
//! for the row lock and then pay a commit of their own. Here they queue per key instead: a
//! batch takes everything queued for the key, applies it in one transaction and answers each
//! request on its own; what queued meanwhile makes the next batch. One request alone is a
//! batch of one. Exactness across processes still rests on the database: each batch locks
//! what it changes, as a single request would.
//!
//! Batches of a key start one at a time. A batch whose work has a part that needs no lock
//! (writing new rows) may let the next batch start once that part is done
//! ([`Handoff::release`]), so that the next batch writes while this one waits for its locks
//! and commits; at most `overlap` batches of a key run at once. A batch that never releases
//! its handoff releases it when it ends.

use std::collections::HashMap;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

/// Requests waiting for the next batch, each with where its answer goes.
type Pending<R, A> = Vec<(R, oneshot::Sender<A>)>;

/// Applies a batch of one key in the order of its requests and gives one answer per
/// request, in that order. It may let the next batch start early through the handoff.
pub type Run<K, R, A> =
    Box<dyn Fn(K, Vec<R>, Handoff) -> Pin<Box<dyn Future<Output = Vec<A>> + Send>> + Send + Sync>;

/// A batch's leave for the next batch of its key to start.
pub struct Handoff(Option<Box<dyn FnOnce() + Send>>);

impl Handoff {
    /// Lets the next batch start now (once).
    pub fn release(&mut self) {
        if let Some(release) = self.0.take() {
            release();
        }
    }
}

impl Drop for Handoff {
    fn drop(&mut self) {
        self.release();
    }
}

/// One key's queue.
struct Queue<R, A> {
    pending: Pending<R, A>,
    /// A batch has started and not released its handoff yet.
    starting: bool,
    /// Batches started and not ended.
    running: usize,
}

impl<R, A> Default for Queue<R, A> {
    fn default() -> Self {
        Self {
            pending: Vec::new(),
            starting: false,
            running: 0,
        }
    }
}

/// A queue of requests per key, each answered once a batch with it has run.
pub struct Batches<K, R, A> {
    /// What applies a batch.
    run: Run<K, R, A>,
    /// The queues of the keys with requests waiting or batches running.
    queues: Mutex<HashMap<K, Queue<R, A>>>,
    /// Most requests applied in one batch.
    max: usize,
    /// Most batches of one key running at once.
    overlap: usize,
}

impl<K, R, A> Batches<K, R, A>
where
    K: Eq + Hash + Clone + Send + 'static,
    R: Send + 'static,
    A: Send + 'static,
{
    /// Queues whose batches `run` applies, at most `max` requests in one and at most
    /// `overlap` batches of a key at once.
    pub fn new(max: usize, overlap: usize, run: Run<K, R, A>) -> Self {
        Self {
            run,
            queues: Mutex::new(HashMap::new()),
            max: max.max(1),
            overlap: overlap.max(1),
        }
    }

    /// Queues `request` for `key` and waits for its answer; `None` when its batch did not
    /// finish (its task panicked). A request whose caller goes away meanwhile is applied
    /// all the same.
    pub async fn submit(self: &Arc<Self>, key: K, request: R) -> Option<A> {
        let (tx, rx) = oneshot::channel();
        let opened = {
            let mut queues = self.lock();
            let queue = queues.entry(key.clone()).or_default();
            queue.pending.push((request, tx));
            self.open(queue)
        };
        if let Some(batch) = opened {
            self.start(key, batch);
        }
        rx.await.ok()
    }

    /// Runs `batch` in a task of its own.
    fn start(self: &Arc<Self>, key: K, batch: Pending<R, A>) {
        tokio::spawn(Arc::clone(self).drive(key, batch));
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, Queue<R, A>>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the next batch of the queue, when one may start and requests wait.
    fn open(&self, queue: &mut Queue<R, A>) -> Option<Pending<R, A>> {
        if queue.starting || queue.running >= self.overlap || queue.pending.is_empty() {
            return None;
        }
        queue.starting = true;
        queue.running += 1;
        let n = queue.pending.len().min(self.max);
        Some(queue.pending.drain(..n).collect())
    }

    /// Marks the end of a batch's start (`starting`) or of the whole batch, and starts the
    /// next one when it may; forgets the key when nothing is left.
    fn settle(&self, key: &K, started: bool, ended: bool) -> Option<Pending<R, A>> {
        let mut queues = self.lock();
        let queue = queues.get_mut(key)?;
        if started {
            queue.starting = false;
        }
        if ended {
            queue.running = queue.running.saturating_sub(1);
        }
        let next = self.open(queue);
        if next.is_none() && queue.running == 0 && queue.pending.is_empty() {
            queues.remove(key);
        }
        next
    }

    /// Runs `batch` and the batches that start when it ends, in this task.
    async fn drive(self: Arc<Self>, key: K, mut batch: Pending<R, A>) {
        loop {
            let mut end = End {
                batches: Arc::clone(&self),
                key: key.clone(),
                armed: true,
            };
            let (requests, waiting): (Vec<R>, Vec<_>) = batch.into_iter().unzip();
            let handoff = {
                let (batches, key) = (Arc::clone(&self), key.clone());
                Handoff(Some(Box::new(move || {
                    if let Some(next) = batches.settle(&key, true, false) {
                        batches.start(key, next);
                    }
                })))
            };
            let answers = (self.run)(key.clone(), requests, handoff).await;
            debug_assert_eq!(answers.len(), waiting.len(), "one answer per request");
            for (tx, answer) in waiting.into_iter().zip(answers) {
                let _ = tx.send(answer);
            }
            end.armed = false;
            match self.settle(&key, false, true) {
                Some(next) => batch = next,
                None => return,
            }
        }
    }
}

/// Ends a batch whose task panicked: its requests end without an answer (their senders are
/// dropped) and the requests queued behind it get the next batch.
struct End<K: Eq + Hash + Clone + Send + 'static, R: Send + 'static, A: Send + 'static> {
    batches: Arc<Batches<K, R, A>>,
    key: K,
    armed: bool,
}

impl<K, R, A> Drop for End<K, R, A>
where
    K: Eq + Hash + Clone + Send + 'static,
    R: Send + 'static,
    A: Send + 'static,
{
    fn drop(&mut self) {
        if self.armed
            && let Some(next) = self.batches.settle(&self.key, false, true)
        {
            self.batches.start(self.key.clone(), next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_requests_are_applied_in_batches_and_each_gets_its_own_answer() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&sizes);
        let run: Run<u8, u32, (u32, usize)> = Box::new(move |_, requests: Vec<u32>, _| {
            let seen = Arc::clone(&seen);
            Box::pin(async move {
                seen.lock().expect("sizes").push(requests.len());
                tokio::task::yield_now().await;
                let n = requests.len();
                requests.into_iter().map(|r| (r, n)).collect()
            })
        });
        let batches = Arc::new(Batches::new(4, 1, run));
        let tasks: Vec<_> = (0..40u32)
            .map(|i| {
                let batches = Arc::clone(&batches);
                tokio::spawn(async move { batches.submit(7, i).await })
            })
            .collect();
        for (i, t) in tasks.into_iter().enumerate() {
            let (echo, size) = t.await.expect("task").expect("an answer");
            assert_eq!(echo, i as u32);
            assert!((1..=4).contains(&size));
        }
        assert_eq!(sizes.lock().expect("sizes").iter().sum::<usize>(), 40);
        assert!(batches.lock().is_empty(), "the key is forgotten when idle");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_that_hands_off_lets_the_next_start_and_no_more_than_overlap_run_at_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (now, seen) = (Arc::clone(&running), Arc::clone(&most));
        let run: Run<u8, u32, u32> = Box::new(move |_, requests: Vec<u32>, mut handoff| {
            let (now, seen) = (Arc::clone(&now), Arc::clone(&seen));
            Box::pin(async move {
                seen.fetch_max(now.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                handoff.release();
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                now.fetch_sub(1, Ordering::SeqCst);
                requests
            })
        });
        let batches = Arc::new(Batches::new(2, 3, run));
        let tasks: Vec<_> = (0..30u32)
            .map(|i| {
                let batches = Arc::clone(&batches);
                tokio::spawn(async move { batches.submit(7, i).await })
            })
            .collect();
        for (i, t) in tasks.into_iter().enumerate() {
            assert_eq!(t.await.expect("task"), Some(i as u32));
        }
        assert_eq!(most.load(Ordering::SeqCst), 3);
        assert!(batches.lock().is_empty(), "the key is forgotten when idle");
    }

    #[tokio::test]
    async fn a_batch_that_panics_ends_its_requests_and_the_next_one_runs() {
        let run: Run<u8, u32, u32> = Box::new(|_, requests: Vec<u32>, _| {
            Box::pin(async move {
                assert!(requests != [1], "the batch fails");
                requests
            })
        });
        let batches = Arc::new(Batches::new(8, 1, run));
        assert_eq!(batches.submit(1, 1).await, None);
        assert_eq!(batches.submit(1, 2).await, Some(2));
    }
}
