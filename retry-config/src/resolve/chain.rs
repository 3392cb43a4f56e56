//! `extends` chains, resolved once for the whole file.
//!
//! A policy's chain is its parent's chain plus itself, so each policy is
//! visited once: the order returned puts every parent before its children,
//! and [`Lineage`] shares each ancestor list with the children that extend
//! it. Loading is linear in the number of policies however deep the chains.
//! (Walking each policy's chain from scratch, with a linear search per step,
//! was cubic: a 2,000-deep chain took seconds and a 5,000-deep one never
//! finished.)

use crate::document::Named;
use crate::limits::MAX_EXTENDS_DEPTH;
use std::collections::HashMap;
use std::sync::Arc;

/// Why a policy has no valid chain. The cause is reported once, at the
/// policy whose `extends` is wrong; its descendants are skipped quietly, as
/// their fix is the same.
pub(crate) enum Broken<'a> {
    /// `from` extends `target`, which no policy is named.
    Unknown { from: &'a Named, target: &'a str },
    /// These policies extend each other in a ring, in `extends` order.
    Cycle(Vec<&'a Named>),
    /// `from` has more than [`MAX_EXTENDS_DEPTH`] ancestors (the first such
    /// policy of its chain; the ones extending it are skipped quietly).
    TooDeep { from: &'a Named },
}

/// The policies that `extends` links, by index into the file's policies.
pub(crate) struct Chains {
    /// Each policy's parent, for policies whose chain is valid (`Some(None)` for a root).
    parents: Vec<Option<Option<usize>>>,
    /// Policies with a valid chain, every parent before its children.
    order: Vec<usize>,
}

/// What a policy's walk found at its end.
#[derive(Clone, Copy, PartialEq)]
enum Mark {
    Unvisited,
    /// On the walk in progress: meeting it again closes a cycle.
    OnWalk,
    Valid,
    Broken,
}

impl Chains {
    /// Links `policies` (names unique, as TOML tables are), reporting each
    /// broken chain once through `report`.
    pub(crate) fn link<'a>(policies: &'a [Named], mut report: impl FnMut(Broken<'a>)) -> Chains {
        let index: HashMap<&str, usize> = policies
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.as_str(), i))
            .collect();
        // Each policy's declared parent: None for a root, Some(Err) for a missing one.
        let declared: Vec<Option<Result<usize, &str>>> = policies
            .iter()
            .map(|p| {
                p.extends
                    .as_ref()
                    .map(|(target, _)| index.get(target.as_str()).copied().ok_or(target.as_str()))
            })
            .collect();
        let mut marks = vec![Mark::Unvisited; policies.len()];
        let mut parents = vec![None; policies.len()];
        // How many ancestors each policy with a valid chain has.
        let mut depths = vec![0usize; policies.len()];
        let mut order = Vec::with_capacity(policies.len());
        let mut walk = Vec::new();
        for start in 0..policies.len() {
            // Follow `extends` until a root, a policy already settled, a
            // missing parent or a policy of this same walk (a cycle).
            let mut current = start;
            // The depth of the walk's farthest policy, when its chain is valid.
            let mut depth = 0;
            let end = loop {
                match marks[current] {
                    Mark::Unvisited => {}
                    settled => {
                        depth = depths[current] + 1;
                        break settled;
                    }
                }
                marks[current] = Mark::OnWalk;
                walk.push(current);
                match declared[current] {
                    None => break Mark::Valid,
                    Some(Ok(parent)) if marks[parent] == Mark::OnWalk => {
                        let from = walk.iter().position(|&w| w == parent).unwrap_or(0);
                        report(Broken::Cycle(
                            walk[from..].iter().map(|&i| &policies[i]).collect(),
                        ));
                        break Mark::Broken;
                    }
                    Some(Ok(parent)) => current = parent,
                    Some(Err(target)) => {
                        report(Broken::Unknown {
                            from: &policies[current],
                            target,
                        });
                        break Mark::Broken;
                    }
                }
            };
            // The walk ran child to ancestor: settle it ancestor first. The
            // first policy past the depth limit breaks the rest of the walk
            // (which extends it), reported once.
            let mut end = end;
            for &i in walk.iter().rev() {
                if end == Mark::Valid && depth > MAX_EXTENDS_DEPTH {
                    report(Broken::TooDeep { from: &policies[i] });
                    end = Mark::Broken;
                }
                marks[i] = end;
                if end == Mark::Valid {
                    parents[i] = Some(declared[i].and_then(Result::ok));
                    depths[i] = depth;
                    order.push(i);
                }
                depth += 1;
            }
            walk.clear();
        }
        Chains { parents, order }
    }

    /// Policies with a valid chain, every parent before its children.
    pub(crate) fn order(&self) -> &[usize] {
        &self.order
    }

    /// The parent of policy `i`, when its chain is valid and it has one.
    pub(crate) fn parent(&self, i: usize) -> Option<usize> {
        self.parents[i].flatten()
    }
}

/// A policy's ancestors, nearest first, sharing each tail with every other
/// policy that extends the same ancestor: a chain of any depth costs one node
/// per policy rather than one per policy and ancestor.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lineage(Option<Arc<Node>>);

#[derive(Debug)]
struct Node {
    name: String,
    rest: Lineage,
}

impl Lineage {
    /// `name` followed by `rest`: the lineage a policy named `name`, whose
    /// ancestors are `rest`, passes on to the policies that extend it.
    pub(crate) fn extending(name: &str, rest: &Lineage) -> Lineage {
        Lineage(Some(Arc::new(Node {
            name: name.to_owned(),
            rest: rest.clone(),
        })))
    }

    /// The ancestors' names, nearest first.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::successors(self.0.as_deref(), |node| node.rest.0.as_deref())
            .map(|node| node.name.as_str())
    }
}

impl Drop for Node {
    /// Unlinks the tail iteratively: the default drop would recurse once per
    /// ancestor and overflow the stack on a deep chain.
    fn drop(&mut self) {
        let mut rest = self.rest.0.take();
        while let Some(node) = rest {
            match Arc::try_unwrap(node) {
                Ok(mut node) => rest = node.rest.0.take(),
                Err(_) => break, // still shared: its other owners drop it
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Diagnostics, Source};
    use crate::document;

    fn doc(text: &str) -> document::Document {
        let source = Arc::new(Source::new("f", text));
        document::parse(&source, None, &mut Diagnostics::new())
    }

    #[test]
    fn parents_come_before_children_whatever_the_file_order() {
        let d = doc("[policies.c]\nextends = \"b\"\n[policies.b]\nextends = \"a\"\n[policies.a]\n");
        let chains = Chains::link(&d.policies, |_| panic!("nothing is broken"));
        let names: Vec<&str> = chains
            .order()
            .iter()
            .map(|&i| d.policies[i].name.as_str())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(chains.parent(0), Some(1));
        assert_eq!(chains.parent(2), None);
    }

    #[test]
    fn a_cycle_is_reported_once_and_its_descendants_are_skipped() {
        let d = doc(
            "[policies.x]\nextends = \"a\"\n[policies.a]\nextends = \"b\"\n[policies.b]\nextends = \"a\"\n[policies.ok]\n",
        );
        let mut cycles = Vec::new();
        let chains = Chains::link(&d.policies, |b| match b {
            Broken::Cycle(members) => {
                cycles.push(members.iter().map(|m| m.name.clone()).collect::<Vec<_>>())
            }
            Broken::Unknown { .. } | Broken::TooDeep { .. } => {
                panic!("no unknown parent, nothing too deep")
            }
        });
        assert_eq!(cycles, [["a", "b"]]);
        // Only `ok` has a valid chain; `x` leads into the cycle and is not reported.
        assert_eq!(chains.order(), [3]);
    }

    #[test]
    fn a_lineage_is_shared_not_copied() {
        let root = Lineage::default();
        let one = Lineage::extending("p0", &root);
        let two = Lineage::extending("p1", &one);
        let sibling = Lineage::extending("p1", &one);
        assert_eq!(two.names().collect::<Vec<_>>(), ["p1", "p0"]);
        assert_eq!(sibling.names().collect::<Vec<_>>(), ["p1", "p0"]);
        // `one` is the shared tail of both: three owners, one node.
        assert_eq!(Arc::strong_count(one.0.as_ref().unwrap()), 3);
    }

    #[test]
    fn a_deep_lineage_drops_without_recursion() {
        let mut lineage = Lineage::default();
        for i in 0..1_000_000 {
            lineage = Lineage::extending(&format!("p{i}"), &lineage);
        }
        assert_eq!(lineage.names().count(), 1_000_000);
        drop(lineage);
    }
}
