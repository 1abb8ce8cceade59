//! How the batch functions spread texts over the cores.

use std::sync::{Mutex, PoisonError};

/// `each` of every item (with its index in `items`), in input order, on
/// every thread of the pool. The items are handed out one at a time,
/// longest first: the last ones are the shortest, so no thread is left with
/// a long one while the others are idle (rayon's halving of an index range
/// did leave that: 2-core speed-ups of 1.5x-1.7x). Each thread runs its
/// share inside `around`, which sets the thread up once (and must call the
/// function it is given).
pub fn longest_first<T, R>(
    items: Vec<T>,
    len: impl Fn(&T) -> usize,
    around: impl Fn(&mut (dyn FnMut() + Send)) + Sync,
    each: impl Fn(usize, T) -> R + Sync,
) -> Vec<R>
where
    T: Send,
    R: Send,
{
    longest_first_in_groups(items, len, 0, around, each, |made| made)
}

/// [`longest_first`], with the items handed out in groups: a thread takes
/// items until their lengths add up to `group_len` (one at least), runs
/// `each` on every one, then `finish` on the group's results, which returns
/// one result for each, in order. What `finish` does once per group (take
/// the GIL, say) is then done less often for short items.
pub fn longest_first_in_groups<T, P, R>(
    items: Vec<T>,
    len: impl Fn(&T) -> usize,
    group_len: usize,
    around: impl Fn(&mut (dyn FnMut() + Send)) + Sync,
    each: impl Fn(usize, T) -> P + Sync,
    finish: impl Fn(Vec<P>) -> Vec<R> + Sync,
) -> Vec<R>
where
    T: Send,
    R: Send,
{
    let mut numbered: Vec<(usize, usize, T)> = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| (i, len(&item), item))
        .collect();
    numbered.sort_by_key(|&(_, len, _)| std::cmp::Reverse(len));
    let queue = Mutex::new(numbered.into_iter());
    // A panic never happens while the lock is held (it is taken to take a
    // group alone), so a poisoned queue is still whole.
    let next_group = || {
        let mut queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
        let mut group = Vec::new();
        let mut total = 0;
        while total < group_len.max(1)
            && let Some((i, len, item)) = queue.next()
        {
            total += len.max(1);
            group.push((i, item));
        }
        group
    };
    let made = rayon::broadcast(|_| {
        let mut made = Vec::new();
        around(&mut || {
            loop {
                let group = next_group();
                if group.is_empty() {
                    break;
                }
                let indices: Vec<usize> = group.iter().map(|&(i, _)| i).collect();
                let prepared = group.into_iter().map(|(i, item)| each(i, item)).collect();
                made.extend(indices.into_iter().zip(finish(prepared)));
            }
        });
        made
    });
    // Every index was handed out once: sorted, they are the input order.
    let mut made: Vec<(usize, R)> = made.into_iter().flatten().collect();
    made.sort_unstable_by_key(|(i, _)| *i);
    made.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_item_once_in_input_order() {
        let items: Vec<String> = (0..500).map(|i| "x".repeat(i % 37)).collect();
        let setups = AtomicUsize::new(0);
        let around = |run: &mut (dyn FnMut() + Send)| {
            setups.fetch_add(1, Ordering::Relaxed);
            run();
        };
        let results = longest_first(items.clone(), String::len, around, |i, item| (i, item));
        let expected: Vec<(usize, String)> = items.into_iter().enumerate().collect();
        assert_eq!(results, expected);
        assert_eq!(setups.into_inner(), rayon::current_num_threads());
    }

    #[test]
    fn groups_reach_their_length_and_keep_input_order() {
        let items: Vec<usize> = (0..300).map(|i| (i * 7) % 50).collect();
        let groups = Mutex::new(Vec::new());
        let results = longest_first_in_groups(
            items.clone(),
            |&n| n,
            100,
            |run| run(),
            |i, item| (i, item),
            |made: Vec<(usize, usize)>| {
                groups
                    .lock()
                    .expect("not poisoned")
                    .push(made.iter().map(|&(_, n)| n.max(1)).sum::<usize>());
                made
            },
        );
        let expected: Vec<(usize, usize)> = items.into_iter().enumerate().collect();
        assert_eq!(results, expected);
        let groups = groups.into_inner().expect("not poisoned");
        // Only the group that emptied the queue may fall short.
        let short = groups.iter().filter(|&&total| total < 100).count();
        assert!(short <= 1, "{groups:?}");
    }

    #[test]
    fn longest_items_are_handed_out_first() {
        let order = Mutex::new(Vec::new());
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool")
            .install(|| {
                longest_first(
                    vec![3, 9, 1, 7],
                    |&n| n,
                    |run| run(),
                    |_, item| {
                        order.lock().expect("not poisoned").push(item);
                    },
                )
            });
        assert_eq!(order.into_inner().expect("not poisoned"), [9, 7, 3, 1]);
    }
}
