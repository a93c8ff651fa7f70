//! Group commit: requests for the same thing, applied together in one transaction.
//!
//! Concurrent requests that write the same row (one gift card) would each wait for the row
//! lock and then pay a commit of their own. Here they queue per key instead: a runner task
//! takes everything queued for the key, applies it in one transaction, answers each request
//! on its own, and takes what queued meanwhile, until nothing is left. One request alone is
//! a batch of one. Exactness across processes still rests on the database: each batch locks
//! what it changes, as a single request would.

use std::collections::HashMap;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// Requests waiting for the next batch, each with where its answer goes.
type Pending<R, A> = Vec<(R, oneshot::Sender<A>)>;

/// Applies a batch of one key in the order of its requests and gives one answer per
/// request, in that order.
pub type Run<K, R, A> =
    Box<dyn Fn(K, Vec<R>) -> Pin<Box<dyn Future<Output = Vec<A>> + Send>> + Send + Sync>;

/// A queue of requests per key, each answered once a batch with it has run.
pub struct Batches<K, R, A> {
    /// What applies a batch.
    run: Run<K, R, A>,
    /// Requests waiting for the next batch, per key. A key is present while its runner
    /// runs.
    queues: Mutex<HashMap<K, Pending<R, A>>>,
    /// Most requests applied in one batch.
    max: usize,
}

impl<K, R, A> Batches<K, R, A>
where
    K: Eq + Hash + Clone + Send + 'static,
    R: Send + 'static,
    A: Send + 'static,
{
    /// Queues whose batches `run` applies, at most `max` requests in one.
    pub fn new(max: usize, run: Run<K, R, A>) -> Self {
        Self {
            run,
            queues: Mutex::new(HashMap::new()),
            max: max.max(1),
        }
    }

    /// Queues `request` for `key` and waits for its answer; `None` when its batch did not
    /// finish (its task panicked). A request whose caller goes away meanwhile is applied
    /// all the same.
    pub async fn submit(self: &Arc<Self>, key: K, request: R) -> Option<A> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut queues = self.lock();
            match queues.get_mut(&key) {
                Some(pending) => {
                    pending.push((request, tx));
                    false
                }
                None => {
                    queues.insert(key.clone(), vec![(request, tx)]);
                    true
                }
            }
        };
        if start {
            let runner = Runner {
                batches: Arc::clone(self),
                key,
                done: false,
            };
            tokio::spawn(runner.run());
        }
        rx.await.ok()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, Pending<R, A>>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next batch for `key`; `None` (and the key forgotten) when nothing is queued.
    fn next(&self, key: &K) -> Option<Pending<R, A>> {
        let mut queues = self.lock();
        let pending = queues.get_mut(key)?;
        if pending.is_empty() {
            queues.remove(key);
            return None;
        }
        let n = pending.len().min(self.max);
        Some(pending.drain(..n).collect())
    }
}

/// The task applying one key's batches.
struct Runner<K: Eq + Hash, R, A> {
    batches: Arc<Batches<K, R, A>>,
    key: K,
    /// Set once the queue was found empty and the key forgotten.
    done: bool,
}

impl<K, R, A> Runner<K, R, A>
where
    K: Eq + Hash + Clone + Send + 'static,
    R: Send + 'static,
    A: Send + 'static,
{
    async fn run(mut self) {
        while let Some(batch) = self.batches.next(&self.key) {
            let (requests, waiting): (Vec<R>, Vec<_>) = batch.into_iter().unzip();
            let answers = (self.batches.run)(self.key.clone(), requests).await;
            debug_assert_eq!(answers.len(), waiting.len(), "one answer per request");
            for (tx, answer) in waiting.into_iter().zip(answers) {
                let _ = tx.send(answer);
            }
        }
        self.done = true;
    }
}

impl<K: Eq + Hash, R, A> Drop for Runner<K, R, A> {
    /// A runner that did not finish (its batch panicked) forgets its key, so that its
    /// waiting requests end without an answer and the next request starts a new runner.
    fn drop(&mut self) {
        if !self.done {
            let mut queues = self
                .batches
                .queues
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            queues.remove(&self.key);
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
        let run: Run<u8, u32, (u32, usize)> = Box::new(move |_, requests: Vec<u32>| {
            let seen = Arc::clone(&seen);
            Box::pin(async move {
                seen.lock().expect("sizes").push(requests.len());
                tokio::task::yield_now().await;
                let n = requests.len();
                requests.into_iter().map(|r| (r, n)).collect()
            })
        });
        let batches = Arc::new(Batches::new(4, run));
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

    #[tokio::test]
    async fn a_batch_that_panics_ends_its_requests_and_the_next_one_runs() {
        let run: Run<u8, u32, u32> = Box::new(|_, requests: Vec<u32>| {
            Box::pin(async move {
                assert!(requests != [1], "the batch fails");
                requests
            })
        });
        let batches = Arc::new(Batches::new(8, run));
        assert_eq!(batches.submit(1, 1).await, None);
        assert_eq!(batches.submit(1, 2).await, Some(2));
    }
}
