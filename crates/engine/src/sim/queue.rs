//! The event queue: a heap ordered by (time, insertion sequence), so events at the same instant
//! run in the order they were scheduled and every run is reproducible. Keys are unique, so the
//! pop order is the same whatever the heap's shape: it is 4-ary (shallower than a binary heap,
//! and the four children share a cache line or two) and compares one `u128` key per step.

use crate::units::SimTime;

/// Children per heap node.
const ARITY: usize = 4;

#[derive(Debug)]
struct Entry<E> {
    /// Time in the high 64 bits, insertion sequence in the low: one comparison orders both.
    key: u128,
    event: E,
}

#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    seq: u64,
    last_popped: u64,
}

impl<E> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        Self { heap: Vec::with_capacity(n), seq: 0, last_popped: 0 }
    }

    #[inline]
    pub fn push(&mut self, at: SimTime, event: E) {
        debug_assert!(at.0 >= self.last_popped, "event scheduled in the past");
        let key = (at.0 as u128) << 64 | self.seq as u128;
        self.seq += 1;
        let mut i = self.heap.len();
        self.heap.push(Entry { key, event });
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= key {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        let top = match self.heap.first_mut() {
            None => last,
            Some(root) => {
                let key = last.key;
                let top = std::mem::replace(root, last);
                self.sift_root_down(key);
                top
            }
        };
        let t = (top.key >> 64) as u64;
        debug_assert!(t >= self.last_popped, "time went backwards");
        self.last_popped = t;
        Some((SimTime(t), top.event))
    }

    /// Move the root entry (of key `key`) down below its smaller children until it fits.
    #[inline]
    fn sift_root_down(&mut self, key: u128) {
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            let (c, ck) = if first + ARITY <= n {
                // All four children: the smallest by a two-round tournament.
                let k = [self.heap[first].key, self.heap[first + 1].key, self.heap[first + 2].key, self.heap[first + 3].key];
                let (a, ak) = if k[1] < k[0] { (1, k[1]) } else { (0, k[0]) };
                let (b, bk) = if k[3] < k[2] { (3, k[3]) } else { (2, k[2]) };
                if bk < ak { (first + b, bk) } else { (first + a, ak) }
            } else if first < n {
                let mut c = first;
                for j in first + 1..n {
                    if self.heap[j].key < self.heap[c].key {
                        c = j;
                    }
                }
                (c, self.heap[c].key)
            } else {
                return;
            };
            if key <= ck {
                return;
            }
            self.heap.swap(i, c);
            i = c;
        }
    }

    /// When the earliest event is due, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| SimTime((e.key >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_at_the_same_time_pop_in_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        q.push(SimTime(5), 3u8);
        q.push(SimTime(5), 1u8);
        q.push(SimTime(1), 9u8);
        q.push(SimTime(5), 2u8);
        let order: Vec<u8> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![9, 3, 1, 2]);
    }

    /// Interleaved pushes and pops come out in (time, insertion) order, as a sorted list would.
    #[test]
    fn pops_follow_time_then_insertion_order_under_interleaving() {
        let mut q = EventQueue::with_capacity(0);
        let mut model: Vec<(u64, u64)> = Vec::new();
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let (mut seq, mut now) = (0u64, 0u64);
        for _ in 0..5_000 {
            if next() % 3 != 0 || model.is_empty() {
                let t = now + next() % 50;
                q.push(SimTime(t), seq);
                model.push((t, seq));
                seq += 1;
            } else {
                let (i, _) = model.iter().enumerate().min_by_key(|(_, k)| **k).unwrap();
                let (t, s) = model.remove(i);
                assert_eq!(q.pop(), Some((SimTime(t), s)));
                now = t;
            }
        }
        model.sort();
        for (t, s) in model {
            assert_eq!(q.pop(), Some((SimTime(t), s)));
        }
        assert!(q.is_empty());
    }
}
