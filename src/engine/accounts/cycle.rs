//! The online cycle finder: when a payment S → R arrives, is there already a path R → … → S
//! among the recent qualifying payments? If so, this payment closes a cycle.
//!
//! A breadth-first search from R over the out-edges the caller offers, bounded in depth (cycle
//! length) and in work (edges expanded), so one payment never costs more than the budget. BFS
//! finds the shortest closing path, which is also the one an analyst reads most easily.
//!
//! The chain finder ([`longest_path`]) answers the other question of linear layering: how long
//! is the longest simple path of qualifying payments leading away from a node (forward along
//! out-edges, or backward along in-edges)? A depth-first search bounded the same way.

use rustc_hash::FxHashMap;

/// One step of a found path: the edge `from → to` the neighbour function offered, with the
/// caller's payload for it (the payment's index, reference, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Step<E> {
    pub from: u64,
    pub to: u64,
    pub edge: E,
}

/// Why a search gave up without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search<T> {
    Found(T),
    NotFound,
    /// The budget ran out before the search space did: the answer is unknown.
    OverBudget,
}

/// Finds the shortest path `start → … → goal` of at most `max_edges` edges, expanding at most
/// `budget` edges. `neighbours(node, out)` appends the qualifying out-edges of `node` as
/// `(next node, payload)`.
pub fn shortest_path<E: Clone>(
    start: u64,
    goal: u64,
    max_edges: usize,
    budget: usize,
    mut neighbours: impl FnMut(u64, &mut Vec<(u64, E)>),
) -> Search<Vec<Step<E>>> {
    if max_edges == 0 {
        return Search::NotFound;
    }
    // node -> (parent node, edge payload); the start has no parent.
    let mut parent: FxHashMap<u64, Option<(u64, E)>> = FxHashMap::default();
    parent.insert(start, None);
    let mut frontier = vec![start];
    let mut next = Vec::new();
    let mut out = Vec::new();
    let mut expanded = 0usize;
    for _depth in 0..max_edges {
        for &node in &frontier {
            out.clear();
            neighbours(node, &mut out);
            for (to, edge) in out.drain(..) {
                expanded += 1;
                if expanded > budget {
                    return Search::OverBudget;
                }
                if parent.contains_key(&to) {
                    continue;
                }
                parent.insert(to, Some((node, edge)));
                if to == goal {
                    return Search::Found(unwind(&parent, goal));
                }
                next.push(to);
            }
        }
        if next.is_empty() {
            break;
        }
        frontier.clear();
        std::mem::swap(&mut frontier, &mut next);
    }
    Search::NotFound
}

fn unwind<E: Clone>(parent: &FxHashMap<u64, Option<(u64, E)>>, goal: u64) -> Vec<Step<E>> {
    let mut steps = Vec::new();
    let mut at = goal;
    while let Some(Some((from, edge))) = parent.get(&at) {
        steps.push(Step {
            from: *from,
            to: at,
            edge: edge.clone(),
        });
        at = *from;
    }
    steps.reverse();
    steps
}

/// The longest simple path from `start` of at most `max_edges` edges that avoids the nodes in
/// `avoid`, expanding at most `budget` edges; `neighbours(node, out)` appends the qualifying
/// edges of `node` as `(next node, payload)`. Returns the path and whether the search was
/// complete; over budget, the path is the longest found before the budget ran out.
pub fn longest_path<E: Clone>(
    start: u64,
    avoid: &[u64],
    max_edges: usize,
    budget: usize,
    mut neighbours: impl FnMut(u64, &mut Vec<(u64, E)>),
) -> (Vec<Step<E>>, bool) {
    struct Walk<'a, E, F> {
        neighbours: F,
        avoid: &'a [u64],
        on_path: Vec<u64>,
        path: Vec<Step<E>>,
        best: Vec<Step<E>>,
        expanded: usize,
        budget: usize,
        max_edges: usize,
    }
    impl<E: Clone, F: FnMut(u64, &mut Vec<(u64, E)>)> Walk<'_, E, F> {
        /// False once the budget is spent.
        fn go(&mut self, node: u64) -> bool {
            if self.path.len() > self.best.len() {
                self.best = self.path.clone();
            }
            if self.path.len() == self.max_edges {
                return true;
            }
            let mut out = Vec::new();
            (self.neighbours)(node, &mut out);
            for (to, edge) in out {
                self.expanded += 1;
                if self.expanded > self.budget {
                    return false;
                }
                if self.on_path.contains(&to) || self.avoid.contains(&to) {
                    continue;
                }
                self.on_path.push(to);
                self.path.push(Step {
                    from: node,
                    to,
                    edge,
                });
                let within = self.go(to);
                self.path.pop();
                self.on_path.pop();
                if !within {
                    return false;
                }
            }
            true
        }
    }
    let mut walk = Walk {
        neighbours: &mut neighbours,
        avoid,
        on_path: vec![start],
        path: Vec::new(),
        best: Vec::new(),
        expanded: 0,
        budget,
        max_edges,
    };
    let complete = walk.go(start);
    (walk.best, complete)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn search(edges: &[(u64, u64)], start: u64, goal: u64, max: usize) -> Search<Vec<Step<usize>>> {
        shortest_path(start, goal, max, 100_000, |node, out| {
            for (i, (a, b)) in edges.iter().enumerate() {
                if *a == node {
                    out.push((*b, i));
                }
            }
        })
    }

    /// Brute force: is there a simple path start → goal of at most `max` edges?
    fn exists(edges: &[(u64, u64)], at: u64, goal: u64, max: usize, seen: &mut Vec<u64>) -> bool {
        if max == 0 {
            return false;
        }
        for (a, b) in edges {
            if *a != at || seen.contains(b) {
                continue;
            }
            if *b == goal {
                return true;
            }
            seen.push(*b);
            let found = exists(edges, *b, goal, max - 1, seen);
            seen.pop();
            if found {
                return true;
            }
        }
        false
    }

    #[test]
    fn a_triangle_is_closed_by_its_last_edge() {
        let edges = [(1, 2), (2, 3)];
        // The payment 3 -> 1 closes 1 -> 2 -> 3 -> 1: a path from 1 back to 3 exists.
        let Search::Found(path) = search(&edges, 1, 3, 9) else {
            panic!("no path");
        };
        assert_eq!(
            path.iter().map(|s| (s.from, s.to)).collect::<Vec<_>>(),
            vec![(1, 2), (2, 3)]
        );
        assert_eq!(search(&edges, 1, 3, 1), Search::NotFound);
    }

    #[test]
    fn the_budget_bounds_the_work() {
        let edges: Vec<(u64, u64)> = (0..100).map(|i| (0, i + 1)).collect();
        let result = shortest_path(0, 999, 3, 10, |node, out| {
            for (a, b) in &edges {
                if *a == node {
                    out.push((*b, ()));
                }
            }
        });
        assert_eq!(result, Search::OverBudget);
    }

    /// Brute force: the longest simple path from `at` of at most `max` edges avoiding `seen`.
    fn longest(edges: &[(u64, u64)], at: u64, max: usize, seen: &mut Vec<u64>) -> usize {
        if max == 0 {
            return 0;
        }
        let mut best = 0;
        for (a, b) in edges {
            if *a != at || seen.contains(b) {
                continue;
            }
            seen.push(*b);
            best = best.max(1 + longest(edges, *b, max - 1, seen));
            seen.pop();
        }
        best
    }

    #[test]
    fn a_chain_is_followed_to_its_end_around_the_avoided_nodes() {
        let edges = [(1, 2), (2, 3), (3, 4), (2, 9), (4, 1)];
        let (path, complete) = longest_path(1, &[], 9, 1_000, |node, out| {
            for (a, b) in &edges {
                if *a == node {
                    out.push((*b, ()));
                }
            }
        });
        assert!(complete);
        assert_eq!(
            path.iter().map(|s| s.to).collect::<Vec<_>>(),
            vec![2, 3, 4],
            "the way back to 1 is not simple"
        );
        let (path, _) = longest_path(1, &[3], 9, 1_000, |node, out| {
            for (a, b) in &edges {
                if *a == node {
                    out.push((*b, ()));
                }
            }
        });
        assert_eq!(
            path.iter().map(|s| s.to).collect::<Vec<_>>(),
            vec![2, 9],
            "3 is avoided, so the way on from 2 is 9"
        );
    }

    proptest! {
        /// The chain finder against a brute force: with an ample budget it finds a simple path of
        /// exactly the longest length, made of the graph's edges, avoiding what it must avoid.
        #[test]
        fn the_chain_finder_agrees_with_a_brute_force_search(
            edges in proptest::collection::vec((0u64..8, 0u64..8), 0..24),
            start in 0u64..8,
            avoid in proptest::collection::vec(0u64..8, 0..3),
            max in 1usize..6,
        ) {
            prop_assume!(!avoid.contains(&start));
            let mut seen = vec![start];
            seen.extend(&avoid);
            let expected = longest(&edges, start, max, &mut seen);
            let (path, complete) = longest_path(start, &avoid, max, 1_000_000, |node, out| {
                for (i, (a, b)) in edges.iter().enumerate() {
                    if *a == node {
                        out.push((*b, i));
                    }
                }
            });
            prop_assert!(complete);
            prop_assert_eq!(path.len(), expected);
            let mut visited = vec![start];
            for (i, step) in path.iter().enumerate() {
                prop_assert_eq!(edges[step.edge], (step.from, step.to));
                prop_assert_eq!(step.from, if i == 0 { start } else { path[i - 1].to });
                prop_assert!(!visited.contains(&step.to) && !avoid.contains(&step.to));
                visited.push(step.to);
            }
        }

        /// Against a brute-force search over random small graphs: the finder answers exactly when
        /// a path of at most `max` edges exists, and what it answers is a real path of the graph,
        /// no longer than any other (checked against the brute force with one edge less).
        #[test]
        fn the_finder_agrees_with_a_brute_force_search(
            edges in proptest::collection::vec((0u64..8, 0u64..8), 0..24),
            start in 0u64..8,
            goal in 0u64..8,
            max in 1usize..6,
        ) {
            prop_assume!(start != goal);
            let expected = exists(&edges, start, goal, max, &mut vec![start]);
            match search(&edges, start, goal, max) {
                Search::Found(path) => {
                    prop_assert!(expected);
                    prop_assert!(path.len() <= max);
                    prop_assert_eq!(path[0].from, start);
                    prop_assert_eq!(path[path.len() - 1].to, goal);
                    for pair in path.windows(2) {
                        prop_assert_eq!(pair[0].to, pair[1].from);
                    }
                    for step in &path {
                        prop_assert_eq!(edges[step.edge], (step.from, step.to));
                    }
                    if path.len() > 1 {
                        prop_assert!(!exists(&edges, start, goal, path.len() - 1, &mut vec![start]));
                    }
                }
                Search::NotFound => prop_assert!(!expected),
                Search::OverBudget => prop_assert!(false, "budget is ample"),
            }
        }
    }
}
