//! The lobby's mirror of the rooms other nodes of a cluster run (docs/scaling.md, "The lobby"):
//! fed by their lobby frames, listed with this node's rooms, and told to this node's watchers
//! in the next `lobby_update`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::Lobby;
use crate::protocol::Listed;

/// A room another node runs.
#[derive(Clone)]
pub struct RemoteRoom {
    /// Its node.
    pub node: Arc<str>,
    /// Its summary as that node serialized it.
    pub summary: Arc<serde_json::value::RawValue>,
}

impl Lobby {
    /// Another node's rooms opened or changed (`rooms`, with their ids) and closed
    /// (`removed`): the mirror follows, and watchers hear of it in the next update.
    pub fn apply_remote(
        &self,
        node: &Arc<str>,
        rooms: Vec<(Arc<str>, Arc<serde_json::value::RawValue>)>,
        removed: Vec<String>,
    ) {
        let mut changes = self.remote_changes.lock();
        for (id, summary) in rooms {
            if self.rooms.map.contains_key(&id) {
                continue;
            }
            // A frame of a node that lost the room (it ran a stale copy) does not undo the move.
            if self.remote.get(&id).is_some_and(|r| r.node != *node) {
                continue;
            }
            changes.0.push(Listed::Elsewhere(summary.clone()));
            let node = node.clone();
            self.remote.insert(id, RemoteRoom { node, summary });
        }
        for id in removed {
            // Only the node that ran it may remove it (a stale frame of a node that lost the
            // room must not hide it).
            if self
                .remote
                .remove_if(id.as_str(), |_, r| r.node == *node)
                .is_some()
            {
                changes.1.push(id);
            }
        }
    }
    /// Room `id` of another node moved to `node` (a takeover): its later frames are `node`'s.
    pub fn remote_moved(&self, id: &str, node: &Arc<str>) {
        if let Some(mut r) = self.remote.get_mut(id) {
            r.node = node.clone();
        }
    }
    /// Forgets a remote room (it closed, or this node took it over).
    pub fn forget_remote(&self, id: &str) {
        self.remote.remove(id);
    }
    /// Asks the feed to publish every local room again (Redis lost its copy).
    pub fn republish(&self) {
        self.republish.store(true, Ordering::Relaxed);
    }
}
