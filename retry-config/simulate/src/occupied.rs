//! Which slots of the timing wheel hold items, so the wheel can jump to the
//! next busy tick instead of stepping through empty ones: with 1 ns ticks,
//! calls are thousands of ticks apart.
//!
//! One bit per slot, and one summary bit per 64-slot word, so finding the
//! next busy slot reads at most two words and the summary (16 words for the
//! largest wheel) however far away it is.

/// A set of slots `0..len`, `len` a multiple of 64 (the wheel's sizes are
/// powers of two from 64).
#[derive(Debug)]
pub(crate) struct Occupied {
    words: Vec<u64>,
    /// Bit `w` set when `words[w]` is not zero.
    summary: Vec<u64>,
}

impl Occupied {
    pub(crate) fn new(len: usize) -> Self {
        let words = len.div_ceil(64);
        Occupied {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
        }
    }

    pub(crate) fn insert(&mut self, slot: usize) {
        self.words[slot / 64] |= 1 << (slot % 64);
        self.summary[slot / 4096] |= 1 << ((slot / 64) % 64);
    }

    pub(crate) fn remove(&mut self, slot: usize) {
        let word = slot / 64;
        self.words[word] &= !(1 << (slot % 64));
        if self.words[word] == 0 {
            self.summary[word / 64] &= !(1 << (word % 64));
        }
    }

    /// The first slot at or after `from` in the set, wrapping around to the
    /// start; `None` when the set is empty.
    pub(crate) fn next_from(&self, from: usize) -> Option<usize> {
        self.first_in(from, self.words.len() * 64)
            .or_else(|| self.first_in(0, from))
    }

    /// The first slot of the set in `from..to`.
    fn first_in(&self, from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        // The rest of `from`'s own word.
        let word = from / 64;
        let bits = self.words[word] & (u64::MAX << (from % 64));
        let found = if bits != 0 {
            Some(word * 64 + bits.trailing_zeros() as usize)
        } else {
            self.first_word_after(word)
                .map(|w| w * 64 + self.words[w].trailing_zeros() as usize)
        };
        found.filter(|&slot| slot < to)
    }

    /// The first non-empty word after `word`, through the summary.
    fn first_word_after(&self, word: usize) -> Option<usize> {
        let start = word + 1;
        let mut group = start / 64;
        let mut bits = self.summary.get(group)? & (u64::MAX << (start % 64));
        loop {
            if bits != 0 {
                return Some(group * 64 + bits.trailing_zeros() as usize);
            }
            group += 1;
            bits = *self.summary.get(group)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_next_slot_across_words_groups_and_the_wrap() {
        let mut set = Occupied::new(1 << 16);
        assert_eq!(set.next_from(0), None);
        for slot in [3, 64, 4095, 4096, 60_000] {
            set.insert(slot);
        }
        assert_eq!(set.next_from(0), Some(3));
        assert_eq!(set.next_from(4), Some(64));
        assert_eq!(set.next_from(65), Some(4095));
        assert_eq!(set.next_from(4097), Some(60_000));
        assert_eq!(set.next_from(60_001), Some(3), "wraps around");
        set.remove(3);
        set.remove(64);
        assert_eq!(set.next_from(0), Some(4095));
        set.remove(4095);
        set.remove(4096);
        set.remove(60_000);
        assert_eq!(set.next_from(12_345), None);
    }

    #[test]
    fn agrees_with_a_plain_scan() {
        let len = 256;
        let mut set = Occupied::new(len);
        let mut plain = vec![false; len];
        // A fixed pseudo-random walk of inserts and removes.
        let mut x: u64 = 7;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let slot = (x >> 33) as usize % len;
            if x & 1 == 0 {
                set.insert(slot);
                plain[slot] = true;
            } else {
                set.remove(slot);
                plain[slot] = false;
            }
            let from = (x >> 20) as usize % len;
            let expected = (from..len).chain(0..from).find(|&s| plain[s]);
            assert_eq!(set.next_from(from), expected);
        }
    }
}
