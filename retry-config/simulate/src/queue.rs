//! The herd simulation's event queue: which clients call in which tick.
//!
//! A timing wheel holds the next few thousand ticks, one bucket per tick, so the
//! common case (a retry a few hundred ticks away) is a push onto a vector and
//! a whole tick comes out at once. Retries further away wait in a binary heap
//! and move into the wheel as it turns. Every pending client is in exactly one
//! place, and emptied buckets hand their memory back, so memory follows the
//! number of clients, not the number of ticks. The wheel turns straight to its
//! next busy tick ([`Occupied`]), so time too follows calls, not ticks.

use super::occupied::Occupied;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The wheel's size bounds: at least this many ticks…
const MIN_WHEEL: usize = 64;
/// …and at most this many (1.5 MB of bucket headers), whatever the span asked for.
const MAX_WHEEL: usize = 1 << 16;
/// Memory kept in spare buckets for reuse, in bytes.
const SPARE_BYTES: usize = 8 << 20;

/// Items (the simulated clients themselves, moved rather than referenced, so
/// a tick's clients sit next to each other in memory) keyed by the tick of
/// their next call.
#[derive(Debug)]
pub(crate) struct TickQueue<T> {
    /// The first tick not yet popped; the wheel covers `[next, next + slots.len())`.
    next: u64,
    slots: Vec<Vec<T>>,
    /// The slots with items.
    occupied: Occupied,
    in_wheel: usize,
    far: BinaryHeap<Far<T>>,
    /// Orders far items scheduled for the same tick by when they were pushed.
    far_seq: u64,
    spare: Vec<Vec<T>>,
    spare_items: usize,
}

/// An item beyond the wheel, ordered soonest first (BinaryHeap is a max-heap).
#[derive(Debug)]
struct Far<T> {
    tick: u64,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Far<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.tick, self.seq) == (other.tick, other.seq)
    }
}
impl<T> Eq for Far<T> {}
impl<T> PartialOrd for Far<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Far<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.tick, other.seq).cmp(&(self.tick, self.seq))
    }
}

impl<T> TickQueue<T> {
    /// A queue whose wheel spans about `span` ticks (bounded both ways):
    /// pass the longest wait expected, so that most pushes skip the heap.
    pub(crate) fn new(span: u64) -> Self {
        let span = usize::try_from(span.saturating_add(2)).unwrap_or(MAX_WHEEL);
        let wheel = span.clamp(MIN_WHEEL, MAX_WHEEL).next_power_of_two();
        TickQueue {
            next: 0,
            slots: (0..wheel).map(|_| Vec::new()).collect(),
            occupied: Occupied::new(wheel),
            in_wheel: 0,
            far: BinaryHeap::new(),
            far_seq: 0,
            spare: Vec::new(),
            spare_items: 0,
        }
    }

    fn wheel(&self) -> u64 {
        self.slots.len() as u64
    }

    fn slot(&self, tick: u64) -> usize {
        // The wheel's length is a power of two, so this is a mask.
        (tick % self.wheel()) as usize
    }

    /// Items waiting.
    pub(crate) fn len(&self) -> usize {
        self.in_wheel + self.far.len()
    }

    /// Schedules `item` at `tick`, which must not be before the first tick
    /// not yet popped (earlier ticks are moved up to it).
    pub(crate) fn push(&mut self, tick: u64, item: T) {
        let tick = tick.max(self.next);
        if tick - self.next < self.wheel() {
            self.push_in_wheel(tick, item);
        } else {
            self.far.push(Far {
                tick,
                seq: self.far_seq,
                item,
            });
            self.far_seq += 1;
        }
    }

    fn push_in_wheel(&mut self, tick: u64, item: T) {
        let index = self.slot(tick);
        let slot = &mut self.slots[index];
        if slot.capacity() == 0
            && let Some(spare) = self.spare.pop()
        {
            self.spare_items -= spare.capacity();
            *slot = spare;
        }
        slot.push(item);
        self.occupied.insert(index);
        self.in_wheel += 1;
    }

    /// Moves far items that now fall inside the wheel into it.
    fn refill(&mut self) {
        let horizon = self.next.saturating_add(self.wheel());
        while self.far.peek().is_some_and(|f| f.tick < horizon) {
            if let Some(f) = self.far.pop() {
                self.push_in_wheel(f.tick, f.item);
            }
        }
    }

    /// The earliest tick with items, without taking them: pushes for any
    /// tick from the first not yet popped stay allowed.
    pub(crate) fn peek_tick(&self) -> Option<u64> {
        if self.in_wheel == 0 {
            return self.far.peek().map(|f| f.tick);
        }
        // Heap items lie at or past the wheel's end (pushes put nearer ones
        // in the wheel, and every pop refills), so the wheel's first busy
        // slot from `next` on is the earliest.
        let from = self.slot(self.next);
        let index = self.occupied.next_from(from)?;
        let ahead = (index + self.slots.len() - from) % self.slots.len();
        Some(self.next + ahead as u64)
    }

    /// The earliest tick with items and those items, in the order they were
    /// scheduled. Hand the emptied vector back with [`recycle`](Self::recycle).
    pub(crate) fn pop(&mut self) -> Option<(u64, Vec<T>)> {
        if self.in_wheel == 0 {
            self.next = self.far.peek()?.tick;
        }
        self.refill();
        // The wheel holds ticks [next, next + wheel) and the heap only later
        // ones, so the first busy slot from `next` on is the earliest tick.
        let from = self.slot(self.next);
        let index = self.occupied.next_from(from)?;
        let ahead = (index + self.slots.len() - from) % self.slots.len();
        let tick = self.next + ahead as u64;
        self.next = tick + 1;
        let items = std::mem::take(&mut self.slots[index]);
        self.occupied.remove(index);
        self.in_wheel -= items.len();
        // Heap items now within the wheel's reach come after `tick`.
        self.refill();
        Some((tick, items))
    }

    /// Takes back a popped tick's vector so its memory can serve another tick.
    pub(crate) fn recycle(&mut self, mut items: Vec<T>) {
        items.clear();
        let bytes = (self.spare_items + items.capacity()).saturating_mul(size_of::<T>().max(1));
        if items.capacity() > 0 && bytes <= SPARE_BYTES {
            self.spare_items += items.capacity();
            self.spare.push(items);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_tick_order_across_the_wheel_and_the_heap() {
        let mut q = TickQueue::new(4096);
        let ticks = [5u64, 0, 70_000, 4095, 4096, 5, 1 << 40, 9000];
        for (client, &tick) in ticks.iter().enumerate() {
            q.push(tick, client);
        }
        assert_eq!(q.len(), ticks.len());
        let mut seen = Vec::new();
        while let Some((tick, clients)) = q.pop() {
            seen.push((tick, clients.clone()));
            q.recycle(clients);
        }
        let expected = vec![
            (0, vec![1]),
            (5, vec![0, 5]),
            (4095, vec![3]),
            (4096, vec![4]),
            (9000, vec![7]),
            (70_000, vec![2]),
            (1 << 40, vec![6]),
        ];
        assert_eq!(seen, expected);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn peeking_names_the_next_tick_and_leaves_earlier_pushes_allowed() {
        let mut q = TickQueue::new(64);
        assert_eq!(q.peek_tick(), None);
        q.push(10_000, 'f'); // beyond the wheel: in the heap
        assert_eq!(q.peek_tick(), Some(10_000));
        q.push(3, 'a'); // still allowed, and now the earliest
        assert_eq!(q.peek_tick(), Some(3));
        assert_eq!(q.pop(), Some((3, vec!['a'])));
        assert_eq!(q.peek_tick(), Some(10_000));
        q.push(9, 'b');
        assert_eq!(q.peek_tick(), Some(9));
        assert_eq!(q.pop(), Some((9, vec!['b'])));
        assert_eq!(q.pop(), Some((10_000, vec!['f'])));
        assert_eq!(q.peek_tick(), None);
    }

    #[test]
    fn pushes_while_popping_land_in_later_ticks() {
        let mut q = TickQueue::new(4096);
        q.push(0, 0);
        let mut ticks = Vec::new();
        while let Some((tick, clients)) = q.pop() {
            ticks.push(tick);
            if tick < 20_000 {
                q.push(tick * 2 + 1, clients[0]);
            }
            q.recycle(clients);
        }
        assert_eq!(
            ticks,
            [
                0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1023, 2047, 4095, 8191, 16383, 32767
            ]
        );
    }
}
