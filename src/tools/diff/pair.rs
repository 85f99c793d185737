//! Pairing the calls of two inputs: the n-th call with a given method, tool and arguments in A
//! goes with the n-th such call in B. Calls left over (arguments that changed, such as a
//! timestamp) are then paired by method and tool alone, in order; what is still left is only
//! in A or only in B.

use std::collections::{HashMap, VecDeque};

use super::summary::{CallSummary, Key};

/// Which calls of A go with which of B (indices into the two lists).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pairing {
    /// `(a, b)`, in A's order.
    pub pairs: Vec<(usize, usize)>,
    /// Calls of A with no partner, in order.
    pub only_a: Vec<usize>,
    /// Calls of B with no partner, in order.
    pub only_b: Vec<usize>,
}

/// Pairs `a` with `b`. The arguments count only when every call of both inputs has a digest
/// (a verdict or calls log has none: then method, tool and order alone pair).
pub fn pair(a: &[CallSummary], b: &[CallSummary]) -> Pairing {
    let with_args = a.iter().chain(b).all(|c| c.args.is_some());
    let mut taken_b = vec![false; b.len()];
    let mut partner: Vec<Option<usize>> = vec![None; a.len()];
    let passes: &[bool] = if with_args { &[true, false] } else { &[false] };
    for &args in passes {
        let mut queues: HashMap<Key, VecDeque<usize>> = HashMap::new();
        for (j, call) in b.iter().enumerate().filter(|(j, _)| !taken_b[*j]) {
            queues.entry(call.key(args)).or_default().push_back(j);
        }
        for (i, call) in a.iter().enumerate() {
            if partner[i].is_some() {
                continue;
            }
            if let Some(j) = queues
                .get_mut(&call.key(args))
                .and_then(VecDeque::pop_front)
            {
                partner[i] = Some(j);
                taken_b[j] = true;
            }
        }
    }
    let mut out = Pairing::default();
    for (i, p) in partner.iter().enumerate() {
        match p {
            Some(j) => out.pairs.push((i, *j)),
            None => out.only_a.push(i),
        }
    }
    out.only_b = (0..b.len()).filter(|j| !taken_b[*j]).collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Outcome;
    use smol_str::SmolStr;

    fn call(n: u64, method: &str, tool: Option<&str>, args: Option<u64>) -> CallSummary {
        CallSummary {
            call: n,
            method: Some(SmolStr::new(method)),
            tool: tool.map(SmolStr::new),
            args,
            outcome: Outcome::Success,
            complete: true,
            layer: None,
            advice: None,
            rules: Vec::new(),
            post_count: 1,
            duration_ms: None,
        }
    }

    #[test]
    fn pairs_by_key_then_order_within_the_key() {
        let a = [
            call(0, "initialize", None, Some(1)),
            call(1, "tools/call", Some("echo"), Some(10)),
            call(2, "tools/call", Some("echo"), Some(20)),
            call(3, "tools/call", Some("echo"), Some(10)),
        ];
        // B calls echo(20) first: it still pairs with A's echo(20), and the two echo(10) pair
        // in their order.
        let b = [
            call(0, "initialize", None, Some(1)),
            call(1, "tools/call", Some("echo"), Some(20)),
            call(2, "tools/call", Some("echo"), Some(10)),
            call(3, "tools/call", Some("echo"), Some(10)),
        ];
        let p = pair(&a, &b);
        assert_eq!(p.pairs, vec![(0, 0), (1, 2), (2, 1), (3, 3)]);
        assert!(p.only_a.is_empty() && p.only_b.is_empty());
    }

    #[test]
    fn changed_arguments_fall_back_to_method_and_tool_and_the_rest_is_unpaired() {
        let a = [
            call(0, "tools/call", Some("echo"), Some(1)),
            call(1, "tools/call", Some("pay"), Some(5)),
        ];
        let b = [
            call(0, "tools/call", Some("echo"), Some(2)),
            call(1, "tools/call", Some("lookup"), Some(5)),
            call(2, "ping", None, Some(0)),
        ];
        let p = pair(&a, &b);
        assert_eq!(p.pairs, vec![(0, 0)]);
        assert_eq!(p.only_a, vec![1]);
        assert_eq!(p.only_b, vec![1, 2]);
    }

    #[test]
    fn without_digests_order_within_method_and_tool_pairs() {
        let a = [
            call(0, "tools/call", Some("echo"), None),
            call(1, "tools/call", Some("echo"), None),
        ];
        // One side with digests, the other without: the digests are not used at all.
        let b = [
            call(0, "tools/list", None, Some(3)),
            call(1, "tools/call", Some("echo"), Some(7)),
        ];
        let p = pair(&a, &b);
        assert_eq!(p.pairs, vec![(0, 1)]);
        assert_eq!(p.only_a, vec![1]);
        assert_eq!(p.only_b, vec![0]);
    }
}
