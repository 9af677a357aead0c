//! A quorum view of one resource, without lock values: what each node
//! holds, and the holder a majority agrees on.

use super::limit::within;
use futures::future::join_all;

use super::node::{KeyView, Node, SHARED_MARK};
use super::vote::{Inspection, NodeInspection};
use super::{Engine, holder, quorum, slot_name};

impl<N: Node> Engine<N> {
    /// A quorum view of `resource`: per node what it holds, and how many
    /// agree on the most common value. Values never leave this function.
    pub async fn inspect(&self, resource: &str) -> Inspection {
        let key = self.lock_key(resource);
        let calls = self
            .nodes
            .iter()
            .map(|node| within(self.config.node_timeout, node.inspect(&key)));
        let views: Vec<Option<KeyView>> = join_all(calls)
            .await
            .into_iter()
            .map(|r| r.ok().and_then(Result::ok))
            .collect();
        let (majority, agreeing) = holder::majority_value(&views);
        let values: Vec<Option<&str>> = views
            .iter()
            .map(|v| v.as_ref().and_then(|v| v.value.as_deref()))
            .collect();
        let nodes = views
            .iter()
            .zip(&values)
            .zip(&self.nodes)
            .map(|((view, value), node)| NodeInspection {
                name: node.name().to_owned(),
                standing: node.standing_of(&key),
                reachable: view.is_some(),
                held: value.is_some(),
                with_majority: value.is_some() && *value == majority,
                ttl: view.as_ref().and_then(|v| v.ttl),
                fence: view.as_ref().and_then(|v| v.fence),
            })
            .collect();
        let held = quorum::majority(agreeing, self.nodes.len());
        // Readers as the quorum-th master counts them: a majority sees at
        // least that many.
        let mut readers: Vec<u32> = views.iter().flatten().map(|v| v.readers).collect();
        readers.sort_unstable_by(|a, b| b.cmp(a));
        let shared = held && majority == Some(SHARED_MARK);
        let (permits, permits_out) = self.permits_out(resource, &views).await;
        Inspection {
            permits,
            permits_out,
            readers: if shared {
                readers.get(self.quorum() - 1).copied().unwrap_or(0)
            } else {
                0
            },
            holder: holder::agreed(&views).filter(|_| !shared),
            held,
            agreeing,
            quorum: self.quorum(),
            nodes,
        }
    }

    /// A semaphore of the name (docs/design.md#semaphores): the number of
    /// permits a majority remembers, and how many slots a majority holds;
    /// `(0, 0)` without one.
    async fn permits_out(&self, name: &str, views: &[Option<KeyView>]) -> (u32, u32) {
        let remembered: Vec<u32> = views.iter().flatten().filter_map(|v| v.permits).collect();
        let Some(n) = (remembered.iter().copied())
            .find(|n| quorum::majority(remembered.iter().filter(|m| *m == n).count(), self.nodes.len()))
        else {
            return (0, 0);
        };
        let slots: Vec<String> = (0..n).map(|slot| self.lock_key(&slot_name(name, slot))).collect();
        let calls = (self.nodes.iter()).map(|node| within(self.config.node_timeout, node.views(&slots)));
        let answers: Vec<Vec<KeyView>> = (join_all(calls).await.into_iter())
            .filter_map(|r| r.ok().and_then(Result::ok))
            .filter(|views| views.len() == slots.len())
            .collect();
        let out = (0..slots.len())
            .filter(|slot| {
                let holding = answers.iter().filter(|views| views[*slot].value.is_some()).count();
                quorum::majority(holding, self.nodes.len())
            })
            .count();
        (n, out as u32)
    }
}
