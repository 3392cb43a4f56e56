//! How a registry finds an entry by name: an open-addressed table whose
//! slots hold each name's bytes inline.
//!
//! A lookup through a general-purpose map was a chain of dependent loads
//! (control bytes, entry, the stored name's heap pointer, its bytes) in a
//! function that saved six registers for its rare paths. Here a slot keeps
//! its name as two words and a length ([`Words`]), exact for names of up to
//! 16 bytes (most policy names): a lookup hashes the two words it read from
//! the name, then compares words in the slot itself. Longer names are
//! hashed and compared byte by byte, out of line. The table is at most half
//! full, so a probe meets an empty slot soon.

use std::hash::BuildHasher;

/// Entries by name.
#[derive(Clone)]
pub(super) struct ByName<V> {
    /// A power of two long (or empty), at most half full.
    slots: Vec<Option<Slot<V>>>,
    len: usize,
}

#[derive(Clone)]
struct Slot<V> {
    words: Words,
    name: Box<str>,
    value: V,
}

impl<V> Default for ByName<V> {
    fn default() -> Self {
        ByName {
            slots: Vec::new(),
            len: 0,
        }
    }
}

impl<V: std::fmt::Debug> std::fmt::Debug for ByName<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A registry's `Debug` shows its names as the strings they are.
        f.debug_map()
            .entries(self.slots().map(|s| (&s.name, &s.value)))
            .finish()
    }
}

impl<V> ByName<V> {
    /// The entry stored under `name`. Names of up to 16 bytes take a path
    /// that calls nothing, so it needs no registers saved.
    #[inline]
    pub(super) fn get(&self, name: &str) -> Option<&V> {
        if name.len() > Words::EXACT_UP_TO {
            return self.get_long(name);
        }
        let words = Words::of(name.as_bytes());
        self.find(words.short_hash(), |slot| slot.words == words)
    }

    /// [`get`](Self::get) for a name longer than 16 bytes.
    #[inline(never)]
    fn get_long(&self, name: &str) -> Option<&V> {
        let words = Words::of(name.as_bytes());
        self.find(hash_long(name), |slot| {
            slot.words == words && slot.named(name)
        })
    }

    /// The value of the first slot from `hash` on that `is` accepts, if
    /// one comes before an empty slot.
    #[inline]
    fn find(&self, hash: u64, is: impl Fn(&Slot<V>) -> bool) -> Option<&V> {
        let mask = self.slots.len().wrapping_sub(1);
        let mut at = hash as usize;
        loop {
            let slot = self.slots.get(at & mask)?.as_ref()?;
            if is(slot) {
                return Some(&slot.value);
            }
            at = at.wrapping_add(1);
        }
    }

    /// Stores `value` under `name`, replacing what was there.
    pub(super) fn insert(&mut self, name: &str, value: V) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let words = Words::of(name.as_bytes());
        let at = self.free_or_same(words, name);
        match &mut self.slots[at] {
            Some(kept) => kept.value = value,
            free => {
                *free = Some(Slot {
                    words,
                    name: name.into(),
                    value,
                });
                self.len += 1;
            }
        }
    }

    /// Every name, in no particular order.
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.slots().map(|s| &*s.name)
    }

    fn slots(&self) -> impl Iterator<Item = &Slot<V>> {
        self.slots.iter().flatten()
    }

    /// Where `name` is, or the empty slot it would go to. The table has
    /// room: an empty slot ends every probe.
    fn free_or_same(&self, words: Words, name: &str) -> usize {
        let mask = self.slots.len() - 1;
        let mut at = words.hash(name) as usize & mask;
        while let Some(slot) = &self.slots[at] {
            if slot.words == words && slot.named(name) {
                break;
            }
            at = (at + 1) & mask;
        }
        at
    }

    /// Twice the slots (at least 8), every entry placed anew.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(8);
        let old = std::mem::replace(&mut self.slots, (0..size).map(|_| None).collect());
        for slot in old.into_iter().flatten() {
            let at = self.free_or_same(slot.words, &slot.name);
            self.slots[at] = Some(slot);
        }
    }
}

impl<V> Slot<V> {
    /// Whether this slot, whose words equal `name`'s, is `name`: decided by
    /// the words up to 16 bytes, by the bytes beyond.
    #[inline]
    fn named(&self, name: &str) -> bool {
        name.len() <= Words::EXACT_UP_TO || *self.name == *name
    }
}

/// A name's length and two words of its bytes: for 8 to 16 bytes the first
/// and the last eight (overlapping), for 4 to 7 the first and last four,
/// below that the first, middle and last byte. Those windows cover every
/// byte, so up to 16 bytes two names are equal exactly when their words are.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Words {
    len: usize,
    first: u64,
    last: u64,
}

impl Words {
    /// The longest name its words stand for exactly.
    const EXACT_UP_TO: usize = 16;

    #[inline]
    fn of(bytes: &[u8]) -> Words {
        let len = bytes.len();
        let (first, last) = match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
            (Some(first), Some(last)) => (u64::from_le_bytes(*first), u64::from_le_bytes(*last)),
            _ => match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
                (Some(first), Some(last)) => (
                    u64::from(u32::from_le_bytes(*first)),
                    u64::from(u32::from_le_bytes(*last)),
                ),
                _ => match bytes {
                    [] => (0, 0),
                    [head, ..] => (
                        u64::from(*head)
                            | u64::from(bytes[len / 2]) << 8
                            | u64::from(bytes[len - 1]) << 16,
                        0,
                    ),
                },
            },
        };
        Words { len, first, last }
    }

    /// The table's hash of `name`, whose words these are.
    fn hash(&self, name: &str) -> u64 {
        if self.len > Self::EXACT_UP_TO {
            hash_long(name)
        } else {
            self.short_hash()
        }
    }

    /// The hash of a name of up to 16 bytes: one multiply of its words
    /// (foldhash's folded multiply, with fixed odd keys: the names are the
    /// program's own, never an attacker's, so a keyed DoS-resistant hash
    /// buys nothing here).
    #[inline]
    fn short_hash(&self) -> u64 {
        let a = self.first ^ 0x243F_6A88_85A3_08D3;
        let b = self.last ^ 0x1319_8A2E_0370_7344 ^ (self.len as u64).rotate_right(8);
        let full = u128::from(a) * u128::from(b);
        (full as u64) ^ (full >> 64) as u64
    }
}

/// The hash of a name longer than 16 bytes: every byte, so that long names
/// alike at both ends (`payments-eu-west-1-outbox`, `payments-us-east-1-outbox`)
/// still land apart.
fn hash_long(name: &str) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5851_F42D_4C95_7F2D).hash_one(name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(len: usize) -> String {
        (0..len)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect()
    }

    #[test]
    fn up_to_16_bytes_names_are_equal_exactly_when_their_words_are() {
        for len in 0..=Words::EXACT_UP_TO {
            let name = name(len).into_bytes();
            assert!(Words::of(&name) == Words::of(&name.clone()), "{len}");
            // One byte off, wherever it is, or one byte more or less.
            for at in 0..len {
                let mut other = name.clone();
                other[at] ^= 0x20;
                assert!(
                    Words::of(&name) != Words::of(&other),
                    "{len} bytes, differing at {at}"
                );
            }
            let mut longer = name.clone();
            longer.push(b'z');
            assert!(Words::of(&name) != Words::of(&longer), "{len}");
        }
    }

    #[test]
    fn a_name_looked_up_finds_the_entry_stored_under_it() {
        let mut table = ByName::default();
        assert_eq!(table.get("anything"), None, "an empty table");
        let names: Vec<String> = (0..40).map(name).collect();
        for (n, name) in names.iter().enumerate() {
            table.insert(name, n);
        }
        for (n, name) in names.iter().enumerate() {
            assert_eq!(table.get(name), Some(&n), "{name:?}");
        }
        assert_eq!(table.get("policy-x"), None);
        // Long names alike at both ends, and a replaced entry.
        table.insert("payments-eu-west-1-outbox", 100);
        table.insert("payments-us-east-1-outbox", 101);
        table.insert("payments-us-east-1-outbox", 102);
        assert_eq!(table.get("payments-eu-west-1-outbox"), Some(&100));
        assert_eq!(table.get("payments-us-east-1-outbox"), Some(&102));
        assert_eq!(table.get("payments-us-west-1-outbox"), None);
        assert_eq!(table.names().count(), names.len() + 2);
    }

    #[test]
    fn a_full_table_of_many_names_finds_each_and_no_other() {
        let mut table = ByName::default();
        let names: Vec<String> = (0..5000).map(|i| format!("policy-{i}")).collect();
        for (n, name) in names.iter().enumerate() {
            table.insert(name, n);
        }
        assert!(table.len * 2 <= table.slots.len(), "at most half full");
        for (n, name) in names.iter().enumerate() {
            assert_eq!(table.get(name), Some(&n));
        }
        assert_eq!(table.get("policy-5000"), None);
    }

    #[test]
    fn long_names_alike_at_both_ends_hash_apart() {
        let (a, b) = ("payments-eu-west-1-outbox", "payments-us-east-1-outbox");
        assert_ne!(
            Words::of(a.as_bytes()).hash(a),
            Words::of(b.as_bytes()).hash(b)
        );
    }
}
