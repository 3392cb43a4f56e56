//! How a registry finds an entry by name: the table, the hash, and the
//! comparison of the name looked up with the names stored.

use std::hash::{Hash, Hasher};

/// Entries by name. foldhash with a fixed seed reads a short name a word at
/// a time (FNV-1a, before it, took a multiply per byte in one chain;
/// SipHash, the default, was a third of a lookup). The keys are the
/// program's own policy names, never an attacker's, so a keyed
/// DoS-resistant hash buys nothing here.
pub(super) type ByName<V> = hashbrown::HashMap<StoredName, V, foldhash::fast::FixedState>;

/// A name as a table holds it.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct StoredName(pub(super) Box<str>);

impl std::fmt::Debug for StoredName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A registry's `Debug` shows its names as the strings they are.
        self.0.fmt(f)
    }
}

/// A name being looked up: hashed and compared as a [`StoredName`] is,
/// without making one.
pub(super) struct Name<'a>(pub(super) &'a str);

/// The hash of a name: its bytes alone. `str`'s own `Hash` adds a `0xff`
/// terminator (so that concatenated fields stay apart), which costs
/// foldhash a second round; a table's key is one name, nothing follows it.
#[inline]
fn hash_name<H: Hasher>(name: &str, state: &mut H) {
    state.write(name.as_bytes());
}

impl Hash for StoredName {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_name(&self.0, state);
    }
}

impl Hash for Name<'_> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_name(self.0, state);
    }
}

impl hashbrown::Equivalent<StoredName> for Name<'_> {
    #[inline]
    fn equivalent(&self, stored: &StoredName) -> bool {
        same_name(self.0.as_bytes(), stored.0.as_bytes())
    }
}

/// `a == b`, with names of 4 to 16 bytes (most policy names) compared as
/// two words each, which may overlap: `==` on slices of a length unknown
/// at compile time calls the C library's `bcmp`, and that call was a third
/// of a borrowed lookup.
#[inline]
fn same_name(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    match a.len() {
        8..=16 => a.first_chunk::<8>() == b.first_chunk() && a.last_chunk::<8>() == b.last_chunk(),
        4..=7 => a.first_chunk::<4>() == b.first_chunk() && a.last_chunk::<4>() == b.last_chunk(),
        _ => same_bytes(a, b),
    }
}

/// `a == b` for the rare names shorter than 4 or longer than 16 bytes, out
/// of line so that the common case needs no registers saved for the call.
#[inline(never)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_same_exactly_when_their_bytes_are() {
        for len in 0..40 {
            let name: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_name(&name, &name.clone()), "{len}");
            // One byte off, wherever it is, or one byte more or less.
            for at in 0..len {
                let mut other = name.clone();
                other[at] ^= 0x20;
                assert!(!same_name(&name, &other), "{len} bytes, differing at {at}");
            }
            let mut longer = name.clone();
            longer.push(b'z');
            assert!(
                !same_name(&name, &longer) && !same_name(&longer, &name),
                "{len}"
            );
        }
    }

    #[test]
    fn a_name_looked_up_finds_the_entry_stored_under_it() {
        let names: Vec<String> = (0..40)
            .map(|len| "policy-".repeat(6)[..len].to_owned())
            .collect();
        let mut table = ByName::default();
        for (n, name) in names.iter().enumerate() {
            table.insert(StoredName(name.as_str().into()), n);
        }
        for (n, name) in names.iter().enumerate() {
            assert_eq!(table.get(&Name(name)), Some(&n), "{name:?}");
        }
        assert_eq!(table.get(&Name("policy-x")), None);
    }
}
