//! How the batch functions spread texts over the cores: a work-sharing
//! runner on rayon's global pool, for a caller outside it.
//!
//! The calling thread works on the items itself, beside a helper on each
//! other thread of the pool, and it alone finishes the results (the bindings
//! make their Python objects there). Both choices come from what was measured
//! on a 2-core virtual machine when every pool thread worked and the caller
//! slept:
//! - The caller woke two pool threads and went to sleep. The kernel at times
//!   put both on one core, and left them there for milliseconds while the
//!   other core idled. A caller that keeps working stays on its core, and the
//!   one helper it wakes went to the idle one in most traced calls.
//! - Each pool thread took the GIL for its own results. One that had to wait
//!   for it slept, and the other took and released it again several times
//!   before the sleeper woke: waits far longer than the holds.
//!
//! Helpers take the longest items first, so that the last ones handed out are
//! short and no thread is left with a long one while the others are idle. The
//! caller takes the shortest first: it comes back often to finish what the
//! helpers handed over, so that little waits for it (memory) and each time it
//! holds the GIL is short.
//!
//! Helpers are jobs on the pool that the caller does not wait for: when the
//! pool's threads are busy (other calls' helpers), the caller does the work
//! alone, and a helper that starts late finds nothing left.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// `each` of every item (with its index in `items`), in input order, one item
/// at a time (see the module's description).
pub fn longest_first<T, R>(
    items: Vec<T>,
    len: impl Fn(&T) -> usize,
    each: impl Fn(usize, T) -> R + Send + Sync + 'static,
) -> Vec<R>
where
    T: Send + 'static,
    R: Send + 'static,
{
    longest_first_in_groups(items, len, 0, each, |made| made)
}

/// [`longest_first`], with the items handed out in groups: a thread takes
/// items until their lengths add up to `group_len` (one at least) and runs
/// `each` on every one. `finish` then turns the results of one group or more
/// into one result each, in order, always on the calling thread: what it does
/// once a call (take the GIL, say) is then done less often for short items,
/// and never by two threads at once.
///
/// The caller waits for results, never for a helper: one that has not
/// started when the last result is in (the pool may be busy with other
/// calls' helpers) finds the work gone when it does. Hence the `'static`
/// work, which the helpers reach through a weak reference: the caller owns
/// it, and drops it (the texts with it) before returning, unless a helper is
/// still handing over its last group at that moment.
pub fn longest_first_in_groups<T, P, R>(
    items: Vec<T>,
    len: impl Fn(&T) -> usize,
    group_len: usize,
    each: impl Fn(usize, T) -> P + Send + Sync + 'static,
    mut finish: impl FnMut(Vec<P>) -> Vec<R>,
) -> Vec<R>
where
    T: Send + 'static,
    P: Send + 'static,
{
    let count = items.len();
    let work = Arc::new(Work {
        queue: Queue::new(items, len, group_len),
        handoff: Handoff::default(),
        each,
    });
    let mut made: Vec<(usize, R)> = Vec::with_capacity(count);
    // Returns how many it finished.
    let mut finish_group = |prepared: Vec<(usize, P)>| {
        if prepared.is_empty() {
            return 0;
        }
        let (indices, prepared): (Vec<usize>, Vec<P>) = prepared.into_iter().unzip();
        let results = finish(prepared);
        assert_eq!(results.len(), indices.len(), "one result for each");
        let finished = indices.len();
        made.extend(indices.into_iter().zip(results));
        finished
    };
    // A helper with no group to take would only cost its wake-up.
    let helpers = rayon::current_num_threads()
        .saturating_sub(1)
        .min(work.queue.groups.saturating_sub(1));
    for _ in 0..helpers {
        let work = Arc::downgrade(&work);
        // Nothing panics outside `help`'s own catch: a panic there would
        // abort the process (rayon's handler for spawned jobs).
        rayon::spawn(move || {
            if let Some(work) = work.upgrade() {
                work.help();
            }
        });
    }
    // Should the caller panic, the helpers stop at their current group.
    let _stopped_on_panic = StoppedOnPanic(&work);
    let mut finished = 0;
    while let Some(group) = work.queue.next_group(End::Shortest) {
        // The helpers' results first: they have waited longest.
        finished += finish_group(work.handoff.take());
        finished += finish_group(work.prepare(group));
    }
    // The queue is empty: what is missing is in a helper's hands.
    while finished < count {
        match work.handoff.wait() {
            Ok(prepared) => finished += finish_group(prepared),
            // A helper panicked with its group: so does the caller.
            Err(panic) => resume_unwind(panic),
        }
    }
    // Every index was handed out once: sorted, they are the input order.
    made.sort_unstable_by_key(|(i, _)| *i);
    made.into_iter().map(|(_, result)| result).collect()
}

/// What the caller and its helpers share.
struct Work<T, P, F> {
    queue: Queue<T>,
    handoff: Handoff<P>,
    each: F,
}

impl<T, P, F: Fn(usize, T) -> P> Work<T, P, F> {
    fn prepare(&self, group: Vec<(usize, T)>) -> Vec<(usize, P)> {
        group
            .into_iter()
            .map(|(i, item)| (i, (self.each)(i, item)))
            .collect()
    }

    /// A helper's part: groups from the longest end, handed over one by one.
    fn help(&self) {
        // Declared first, so dropped last: a panic is stored before the
        // helper stops counting as working, which `Handoff::wait` relies on.
        let _working = self.handoff.helper_started();
        let helped = catch_unwind(AssertUnwindSafe(|| {
            while let Some(group) = self.queue.next_group(End::Longest) {
                self.handoff.give(self.prepare(group));
            }
        }));
        if let Err(panic) = helped {
            self.handoff.panicked(panic);
        }
    }
}

/// Which end of the queue a thread takes from.
#[derive(Clone, Copy)]
enum End {
    Longest,
    Shortest,
}

/// Items not yet handed out, sorted longest first.
struct Queue<T> {
    items: Mutex<std::vec::IntoIter<(usize, usize, T)>>,
    group_len: usize,
    /// How many groups the items make when taken from the longest end.
    groups: usize,
}

impl<T> Queue<T> {
    fn new(items: Vec<T>, len: impl Fn(&T) -> usize, group_len: usize) -> Self {
        let mut numbered: Vec<(usize, usize, T)> = items
            .into_iter()
            .enumerate()
            .map(|(i, item)| (i, len(&item), item))
            .collect();
        numbered.sort_by_key(|&(_, len, _)| std::cmp::Reverse(len));
        let group_len = group_len.max(1);
        let mut groups = 0;
        let mut total = 0;
        for &(_, len, _) in &numbered {
            if total == 0 {
                groups += 1;
            }
            if !room_after(&mut total, len, group_len) {
                total = 0;
            }
        }
        Queue {
            items: Mutex::new(numbered.into_iter()),
            group_len,
            groups,
        }
    }

    /// The next items from `end`, with their indices, up to `group_len` in
    /// length (one at least); None once all were handed out.
    fn next_group(&self, end: End) -> Option<Vec<(usize, T)>> {
        let mut items = lock(&self.items);
        let mut group = Vec::new();
        let mut total = 0;
        loop {
            let next = match end {
                End::Longest => items.next(),
                End::Shortest => items.next_back(),
            };
            let Some((i, len, item)) = next else { break };
            group.push((i, item));
            if !room_after(&mut total, len, self.group_len) {
                break;
            }
        }
        (!group.is_empty()).then_some(group)
    }
}

/// Adds an item of `len` to a group's `total`: whether the group has room for
/// another after it (an empty item counts as 1, so groups always end).
fn room_after(total: &mut usize, len: usize, group_len: usize) -> bool {
    *total += len.max(1);
    *total < group_len
}

/// Empties the queue if the caller unwinds, and waits for the helpers to
/// finish the group each holds (one at most): nothing then reads the call's
/// texts after it has returned.
struct StoppedOnPanic<'a, T, P, F>(&'a Work<T, P, F>);

impl<T, P, F> Drop for StoppedOnPanic<'_, T, P, F> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let left: Vec<_> = lock(&self.0.queue.items).by_ref().collect();
            drop(left);
            self.0.handoff.wait_until_idle();
        }
    }
}

/// Results the helpers prepared, on their way to the calling thread.
struct Handoff<P> {
    state: Mutex<HandoffState<P>>,
    given: Condvar,
}

struct HandoffState<P> {
    prepared: Vec<(usize, P)>,
    /// What a helper panicked with, for the caller to raise.
    panic: Option<Box<dyn Any + Send>>,
    /// Helpers that started and have not stopped.
    working: usize,
    /// Whether the caller sleeps on `given` (else giving need not wake it).
    caller_waiting: bool,
}

impl<P> Default for Handoff<P> {
    fn default() -> Self {
        Handoff {
            state: Mutex::new(HandoffState {
                prepared: Vec::new(),
                panic: None,
                working: 0,
                caller_waiting: false,
            }),
            given: Condvar::new(),
        }
    }
}

/// How long the caller polls for the helpers' last results before it
/// sleeps: they are usually a short group away, and waking a sleeping thread
/// can take longer than that on a virtual machine.
const POLL_BEFORE_SLEEP: Duration = Duration::from_micros(200);

impl<P> Handoff<P> {
    /// Counts a helper as working until the returned guard drops.
    fn helper_started(&self) -> Working<'_, P> {
        lock(&self.state).working += 1;
        Working(self)
    }

    fn give(&self, prepared: Vec<(usize, P)>) {
        let mut state = lock(&self.state);
        state.prepared.extend(prepared);
        if state.caller_waiting {
            self.given.notify_one();
        }
    }

    /// What was given so far (possibly nothing), without waiting.
    fn take(&self) -> Vec<(usize, P)> {
        std::mem::take(&mut lock(&self.state).prepared)
    }

    /// What was given, once there is some; or, once no helper is working,
    /// what one panicked with (items are missing only then).
    fn wait(&self) -> Result<Vec<(usize, P)>, Box<dyn Any + Send>> {
        let polling = Instant::now();
        let mut state = lock(&self.state);
        loop {
            if !state.prepared.is_empty() {
                return Ok(std::mem::take(&mut state.prepared));
            }
            if state.working == 0 {
                let lost = || Box::new("a batch helper stopped with items") as Box<dyn Any + Send>;
                return Err(state.panic.take().unwrap_or_else(lost));
            }
            if polling.elapsed() < POLL_BEFORE_SLEEP {
                drop(state);
                std::thread::yield_now();
                state = lock(&self.state);
            } else {
                state = self.sleep(state);
            }
        }
    }

    /// Sleeps until a helper gives or stops (the caller's only way to sleep).
    fn sleep<'a>(
        &'a self,
        mut state: MutexGuard<'a, HandoffState<P>>,
    ) -> MutexGuard<'a, HandoffState<P>> {
        state.caller_waiting = true;
        let mut state = self
            .given
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
        state.caller_waiting = false;
        state
    }

    /// Keeps the first panic of a helper for the caller.
    fn panicked(&self, panic: Box<dyn Any + Send>) {
        let mut state = lock(&self.state);
        if state.panic.is_none() {
            state.panic = Some(panic);
            return;
        }
        drop(state);
        drop(panic); // not under the lock: dropping it runs foreign code
    }

    /// Blocks until no helper is working.
    fn wait_until_idle(&self) {
        let mut state = lock(&self.state);
        while state.working > 0 {
            state = self.sleep(state);
        }
    }
}

/// A working helper (see [`Handoff::helper_started`]).
struct Working<'a, P>(&'a Handoff<P>);

impl<P> Drop for Working<'_, P> {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        state.working -= 1;
        if state.caller_waiting {
            self.0.given.notify_one();
        }
    }
}

/// No code panics while holding these locks (they guard moves and counts;
/// what they hold is dropped after unlocking), so a poisoned one is still
/// consistent.
fn lock<S>(mutex: &Mutex<S>) -> MutexGuard<'_, S> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::thread::ThreadId;

    /// Runs `job` as the caller on a pool of `threads`: the bindings' caller
    /// is outside any pool, but the global pool's size is the machine's.
    fn on_pool<R: Send>(threads: usize, job: impl FnOnce(ThreadId) -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool")
            .install(|| job(std::thread::current().id()))
    }

    /// Blocks until `flag` is set (a helper got work), for at most 10 s.
    fn until(flag: &AtomicBool) {
        let start = Instant::now();
        while !flag.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// `job` on a thread of its own; fails the test if it takes over 30 s,
    /// so that a hang is a failure.
    fn within_30s<R: Send + 'static>(job: impl FnOnce() -> R + Send + 'static) -> R {
        let (sent, received) = mpsc::channel();
        std::thread::spawn(move || sent.send(job()));
        received
            .recv_timeout(Duration::from_secs(30))
            .expect("finished within 30 s")
    }

    fn me() -> ThreadId {
        std::thread::current().id()
    }

    #[test]
    fn every_item_once_in_input_order() {
        let items: Vec<String> = (0..500).map(|i| "x".repeat(i % 37)).collect();
        let expected: Vec<(usize, String)> = items.iter().cloned().enumerate().collect();
        for threads in [1, 2, 3] {
            let results = on_pool(threads, |_| {
                longest_first(items.clone(), String::len, |i, item| (i, item))
            });
            assert_eq!(results, expected);
        }
        // From outside any pool, as the bindings call it.
        assert_eq!(
            longest_first(items, String::len, |i, item| (i, item)),
            expected
        );
    }

    #[test]
    fn no_items() {
        let results = longest_first(Vec::<u8>::new(), |_| 1, |_, item| item);
        assert!(results.is_empty());
    }

    #[test]
    fn groups_from_either_end_reach_their_length_and_no_more() {
        let lens: Vec<usize> = (0..300).map(|i| (i * 7) % 50).collect();
        let longest = lens.iter().copied().max().unwrap_or(0);
        for end in [End::Longest, End::Shortest] {
            let queue = Queue::new(lens.clone(), |&n| n, 100);
            let mut groups = Vec::new();
            while let Some(group) = queue.next_group(end) {
                groups.push(group.iter().map(|&(_, n)| n.max(1)).sum::<usize>());
            }
            let (last, full) = groups.split_last().expect("groups");
            assert!(*last <= 100 + longest);
            assert!(
                full.iter().all(|&t| (100..100 + longest).contains(&t)),
                "{groups:?}"
            );
            if matches!(end, End::Longest) {
                assert_eq!(groups.len(), queue.groups);
            }
        }
    }

    #[test]
    fn helpers_take_the_longest_and_the_caller_the_shortest() {
        let helped = Arc::new(AtomicBool::new(false));
        let taken: Arc<Mutex<Vec<(ThreadId, usize)>>> = Arc::default();
        let caller = on_pool(2, |caller| {
            let (helped, taken) = (Arc::clone(&helped), Arc::clone(&taken));
            longest_first(
                (0..40).collect::<Vec<usize>>(),
                |&n| n,
                move |_, n| {
                    let mut taken_so_far = lock(&taken);
                    taken_so_far.push((me(), n));
                    let helper_took = taken_so_far.iter().filter(|(id, _)| *id != caller).count();
                    drop(taken_so_far);
                    if me() == caller {
                        until(&helped);
                    } else if helper_took >= 3 {
                        helped.store(true, Ordering::Release);
                    }
                },
            );
            caller
        });
        let taken = lock(&taken);
        let by = |who: bool| -> Vec<usize> {
            taken
                .iter()
                .filter(|(id, _)| (*id == caller) == who)
                .map(|&(_, n)| n)
                .collect()
        };
        assert_eq!(by(false)[..3], [39, 38, 37]);
        assert_eq!(by(true)[0], 0);
    }

    #[test]
    fn a_single_group_is_left_to_the_caller() {
        let prepared_on: Arc<Mutex<HashSet<(ThreadId, i32)>>> = Arc::default();
        let caller = on_pool(2, |caller| {
            let prepared = Arc::clone(&prepared_on);
            let each = move |_, n| lock(&prepared).insert((me(), n));
            longest_first_in_groups(vec![3, 2, 1], |&n| n as usize, 100, each, |made| made);
            caller
        });
        let expected = HashSet::from([(caller, 1), (caller, 2), (caller, 3)]);
        assert_eq!(*lock(&prepared_on), expected);
    }

    #[test]
    fn helpers_prepare_items_too() {
        let helped = Arc::new(AtomicBool::new(false));
        let prepared_on: Arc<Mutex<HashSet<ThreadId>>> = Arc::default();
        let results = on_pool(3, |caller| {
            let (helped, prepared_on) = (Arc::clone(&helped), Arc::clone(&prepared_on));
            let each = move |_, item: u32| {
                lock(&prepared_on).insert(me());
                if me() == caller {
                    until(&helped);
                } else {
                    helped.store(true, Ordering::Release);
                }
                item
            };
            // `finish` runs on the caller alone: it need not even be `Send`.
            longest_first_in_groups((0..64).collect(), |_| 1, 1, each, |made| made)
        });
        assert_eq!(results, (0..64).collect::<Vec<u32>>());
        assert!(lock(&prepared_on).len() >= 2, "no helper prepared anything");
    }

    #[test]
    fn a_pool_of_one_thread_leaves_the_work_to_the_caller() {
        let order: Arc<Mutex<Vec<(i32, ThreadId)>>> = Arc::default();
        let caller = on_pool(1, |caller| {
            let order = Arc::clone(&order);
            longest_first(
                vec![3, 9, 1, 7],
                |&n| n as usize,
                move |_, item| {
                    lock(&order).push((item, me()));
                },
            );
            caller
        });
        assert_eq!(*lock(&order), [1, 3, 7, 9].map(|n| (n, caller)));
    }

    #[test]
    fn a_short_call_does_not_wait_for_a_busy_pool() {
        // Long calls whose helpers hold every thread of the global pool until
        // released; a short call beside them is done by its caller alone.
        let threads = rayon::current_num_threads();
        if threads < 2 {
            return; // no helpers on one thread: nothing to hold the pool
        }
        let released = Arc::new(AtomicBool::new(false));
        let blocked = Arc::new(AtomicUsize::new(0));
        let long_calls: Vec<_> = (0..threads)
            .map(|_| {
                let (released, blocked) = (Arc::clone(&released), Arc::clone(&blocked));
                std::thread::spawn(move || {
                    let each = move |_, item: u32| {
                        if rayon::current_thread_index().is_some() {
                            blocked.fetch_add(1, Ordering::AcqRel);
                            until(&released);
                        } else {
                            // The caller leaves items for its helper to take.
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        item
                    };
                    longest_first((0..100).collect(), |_| 1, each)
                })
            })
            .collect();
        let start = Instant::now();
        while blocked.load(Ordering::Acquire) < threads && start.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            blocked.load(Ordering::Acquire),
            threads,
            "the pool was not taken"
        );
        let (results, prepared_on, caller) = within_30s(|| {
            let prepared_on: Arc<Mutex<HashSet<ThreadId>>> = Arc::default();
            let on = Arc::clone(&prepared_on);
            let results = longest_first(
                (0..3).collect(),
                |_| 1,
                move |_, item: u32| {
                    lock(&on).insert(me());
                    item
                },
            );
            let prepared_on = lock(&prepared_on).clone();
            (results, prepared_on, me())
        });
        released.store(true, Ordering::Release);
        assert_eq!(results, [0, 1, 2]);
        assert_eq!(prepared_on, HashSet::from([caller]));
        for call in long_calls {
            assert_eq!(
                call.join().expect("long call"),
                (0..100).collect::<Vec<u32>>()
            );
        }
    }

    /// `longest_first` of `0..n` on a pool of two threads, with `each` told
    /// the caller's thread; what it returned or panicked with.
    fn caught_on_two(
        n: u32,
        each: impl Fn(ThreadId, u32) -> u32 + Send + Sync + 'static,
    ) -> std::thread::Result<Vec<u32>> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            on_pool(2, |caller| {
                longest_first((0..n).collect(), |_| 1, move |_, item| each(caller, item))
            })
        }))
    }

    #[test]
    fn a_helper_panic_is_raised_not_waited_for() {
        let message = within_30s(|| {
            let helped = AtomicBool::new(false);
            let panic = caught_on_two(100, move |caller, item| {
                if me() != caller {
                    helped.store(true, Ordering::Release);
                    panic!("helper fails on item {item}");
                }
                until(&helped);
                item
            })
            .expect_err("the helper's panic");
            panic.downcast_ref::<String>().cloned().unwrap_or_default()
        });
        assert!(message.starts_with("helper fails"), "{message}");
    }

    #[test]
    fn a_caller_panic_stops_the_helpers() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        within_30s(move || {
            let helped = AtomicBool::new(false);
            let outcome = caught_on_two(200, move |caller, item| {
                counted.fetch_add(1, Ordering::Relaxed);
                if me() == caller {
                    until(&helped);
                    panic!("caller fails");
                }
                helped.store(true, Ordering::Release);
                std::thread::sleep(Duration::from_millis(5));
                item
            });
            assert!(outcome.is_err());
        });
        // The caller raised only once the helper had finished the item it
        // held, with the queue emptied: no item is started after that.
        let raised = calls.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(calls.load(Ordering::Relaxed), raised);
        assert!(raised < 200);
    }
}
