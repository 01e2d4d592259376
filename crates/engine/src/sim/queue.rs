//! The event queue: a binary heap ordered by (time, insertion sequence), so events at the same
//! instant run in the order they were scheduled and every run is reproducible.

use crate::units::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// An event with its time and sequence number, ordered by (time, sequence) alone, earliest
/// first: sequence numbers are unique, so the event itself is never compared.
#[derive(Debug)]
struct Entry<E> {
    at: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed: the heap pops its greatest entry, which must be the earliest.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    last_popped: u64,
}

impl<E> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        Self { heap: BinaryHeap::with_capacity(n), seq: 0, last_popped: 0 }
    }

    #[inline]
    pub fn push(&mut self, at: SimTime, event: E) {
        debug_assert!(at.0 >= self.last_popped, "event scheduled in the past");
        self.heap.push(Entry { at: at.0, seq: self.seq, event });
        self.seq += 1;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let Entry { at: t, event: e, .. } = self.heap.pop()?;
        debug_assert!(t >= self.last_popped, "time went backwards");
        self.last_popped = t;
        Some((SimTime(t), e))
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
}
