//! Who runs each room (docs/scaling.md, "Room ownership", "Failure and recovery", "Caps"): the
//! leases of this node's rooms and its heartbeat, the sweep that takes over the rooms of a node
//! that died and drops its connections from this node's rooms, `locate` (where a room runs),
//! and the players' room counts across nodes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use super::inbound::{Proxied, ProxyKey};
use super::{node, wire, Link};
use crate::protocol::{encode, ErrorCode, ProtoError, ServerMsg};
use crate::room::{RoomCmd, RoomHandle, Who};
use crate::store::StoreEvent;
use crate::Server;

/// Extends a lease only if it is still this node's: 1 renewed, 0 gone, -1 another node's.
const RENEW: &str = "local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if v then return -1 end
return 0";
/// Takes a lease that is free or already this node's: 1 taken, 0 another node's.
const TAKE: &str = "local v = redis.call('GET', KEYS[1])
if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0";
/// Deletes a lease only if it is still this node's.
pub(super) const RELEASE: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then
return redis.call('DEL', KEYS[1]) end return 0";
/// Redis or PostgreSQL did not answer: where a room runs is not known now. Not the same as no
/// room: a resume keeps the seat and its client is asked to reconnect (docs/scaling.md,
/// "Failure and recovery").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unreachable;

impl From<Unreachable> for ProtoError {
    fn from(_: Unreachable) -> ProtoError {
        ProtoError::new(
            ErrorCode::RoomUnavailable,
            "the cluster cannot tell where the room runs now; try again",
        )
    }
}

/// Where a room runs ([`locate`]): here or elsewhere, `None` for no such room, or not known now.
pub type Located = Result<Option<RoomHandle>, Unreachable>;

/// Looks at the lease of a room nobody here knows of, and the wait between them.
const FRESH_LOOKS: u32 = 10;
const FRESH_WAIT: Duration = Duration::from_millis(50);

/// Every third of the lease: renews the leases of this node's rooms and its heartbeat, takes
/// again a lease that vanished (a restarted Redis), and logs one another node took (fencing
/// stops this node's commits for it).
pub(super) async fn leases(server: Arc<Server>, link: Arc<Link>) {
    let mut tick = tokio::time::interval(link.lease / 3);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let lease_ms = link.lease.as_millis() as u64;
    loop {
        tokio::select! {
            _ = server.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let rooms = server.lobby.local_room_ids();
        let mut redis = link.redis.clone();
        let mut pipe = redis::pipe();
        pipe.cmd("SET")
            .arg(link.names.alive_key(&link.node))
            .arg(1)
            .arg("PX")
            .arg(lease_ms)
            .ignore();
        for room in &rooms {
            pipe.cmd("EVAL")
                .arg(RENEW)
                .arg(1)
                .arg(link.names.owner_key(room))
                .arg(&*link.node)
                .arg(lease_ms);
        }
        let results: Vec<i64> = match pipe.query_async(&mut redis).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("cluster: renewing leases failed: {e}");
                continue;
            }
        };
        for (room, r) in rooms.iter().zip(results) {
            match r {
                // Lost (a pause or a cut from Redis longer than the lease, and another node took
                // the room): this copy stops, its members reconnect to the new owner.
                // (A Redis error while taking it back is not a loss: the next round retries.)
                0 | -1 if r == -1 || take_lease(&link, room).await == Ok(false) => {
                    tracing::warn!(%room, "cluster: another node holds this room's lease; stopping it here");
                    if let Some(e) = server.lobby.room(room) {
                        e.handle.moved();
                    }
                }
                _ => {}
            }
        }
        pairing_lease(&server, &link).await;
    }
}

/// The pairing node's lease (docs/scaling.md, "Quick pairing"): extended by the node that holds
/// it, taken by any node when it is gone (both `take_key`); every node notes who holds it. When it moves, the
/// seeks this node's connections had on the old pairing node are gone: they hear
/// `seek_cancelled` (and seek again), and its watchers an empty `seeks`.
async fn pairing_lease(server: &Server, link: &Link) {
    let key = link.names.pairing();
    let mut redis = link.redis.clone();
    // Taken when free, extended when this node's already.
    let _ = take_key(link, &key).await;
    let Ok(now) = redis::cmd("GET")
        .arg(&key)
        .query_async::<Option<String>>(&mut redis)
        .await
    else {
        return;
    };
    let now: Option<Arc<str>> = now.map(Into::into);
    let before = std::mem::replace(&mut *link.leader.write(), now.clone());
    if before.is_none() || before == now {
        return;
    }
    tracing::info!(leader = ?now, "cluster: the pairing node changed");
    // This node paired until now: its seeks (its own connections' and other nodes') are gone.
    if before.as_deref() == Some(&*link.node) {
        server.pairing.cancel_all();
    }
    let cancelled = encode(&ServerMsg::SeekCancelled {}, None);
    let seekers: Vec<u64> = link.seekers.iter().map(|e| *e.key()).collect();
    link.seekers.clear();
    for conn in seekers {
        if let Some(c) = server.connection(conn) {
            c.send(cancelled.clone());
        }
    }
    if link.remote_seeks.lock().take().is_some() {
        server
            .lobby
            .tell_watchers(&encode(&ServerMsg::Seeks { seeks: Vec::new() }, None));
    }
}

/// `SET NX PX`: whether this node now holds room `room`'s lease.
async fn take_lease(link: &Link, room: &str) -> Result<bool, Unreachable> {
    take_key(link, &link.names.owner_key(room)).await
}

/// Takes the lease `key` for this node: set when free, or extended when this node's id holds
/// it already (the same node restarted within a lease); whether it holds it now (an error of
/// Redis is logged).
pub(super) async fn take_key(link: &Link, key: &str) -> Result<bool, Unreachable> {
    let mut redis = link.redis.clone();
    let r: redis::RedisResult<i64> = redis::cmd("EVAL")
        .arg(TAKE)
        .arg(1)
        .arg(key)
        .arg(&*link.node)
        .arg(link.lease.as_millis() as u64)
        .query_async(&mut redis)
        .await;
    match r {
        Ok(taken) => Ok(taken == 1),
        Err(e) => {
            tracing::warn!(key, "cluster: taking a lease failed: {e}");
            Err(Unreachable)
        }
    }
}

/// Every how many sweeps (two leases) the store is asked for the rooms of dead nodes.
const ADOPT_EVERY: u32 = 4;

/// Every half lease: the rooms of other nodes this node knows of (the lobby's, those its
/// connections are in, and every two leases those of dead nodes the store knows of: `adopt`)
/// whose lease has been gone for a whole lease (their node died; a live node takes its leases
/// again within a third of one, even after Redis restarted empty) are taken over; rooms whose
/// owner changed are noted.
pub(super) async fn sweep(server: Arc<Server>, link: Arc<Link>) {
    let mut tick = tokio::time::interval(link.lease / 2);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // When each room was first seen without a lease, and each node without a heartbeat.
    let mut missing: HashMap<Arc<str>, tokio::time::Instant> = HashMap::new();
    let mut dead: HashMap<Arc<str>, tokio::time::Instant> = HashMap::new();
    let mut sweeps = 0u32;
    loop {
        tokio::select! {
            _ = server.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        drop_dead_nodes(&server, &link, &mut dead).await;
        sweeps = sweeps.wrapping_add(1);
        // Bounded: a PostgreSQL that hangs must not hold up the takeovers below.
        if sweeps % ADOPT_EVERY == 0 {
            let _ = tokio::time::timeout(link.lease, adopt(&server, &link)).await;
        }
        let rooms: Vec<(Arc<str>, Arc<str>)> = link
            .owners
            .iter()
            .map(|e| (e.key().clone(), e.value().clone()))
            .collect();
        if rooms.is_empty() {
            missing.clear();
            continue;
        }
        let keys: Vec<String> = rooms
            .iter()
            .map(|(id, _)| link.names.owner_key(id))
            .collect();
        let mut redis = link.redis.clone();
        let owners: Vec<Option<String>> =
            match redis::cmd("MGET").arg(&keys).query_async(&mut redis).await {
                Ok(o) => o,
                Err(e) => {
                    tracing::warn!("cluster: reading leases failed: {e}");
                    continue;
                }
            };
        let now = tokio::time::Instant::now();
        let mut still = HashMap::new();
        for ((room, node), owner) in rooms.into_iter().zip(owners) {
            match owner {
                None => {
                    let since = missing.get(&room).copied().unwrap_or(now);
                    if now.duration_since(since) >= link.lease {
                        if take_over(&server, &link, &room).await.is_err() {
                            still.insert(room, since); // again at the next round
                        }
                    } else {
                        still.insert(room, since);
                    }
                }
                Some(owner) if *owner != *node && *owner != *link.node => {
                    node::moved(&server, &link, &room, owner.into());
                }
                Some(_) => {}
            }
        }
        missing = still;
    }
}

/// Notes, with their owner, the unfinished and unstarted rooms this node does not know of of
/// nodes without a heartbeat, and of this node's id from before this process started (a
/// former process of the same id, restarted: its waiting rooms are no game to restore). A room
/// whose owner died before any other node heard of it (before its first lobby frame, with no
/// player on another node) is otherwise taken over only when one of its players comes back.
/// The sweep then takes them over as any other room whose lease is gone (a room without a
/// game is released, and its fence row with it). Errors are logged and the next round tries
/// again.
async fn adopt(server: &Arc<Server>, link: &Link) {
    let nodes = match read_store(server, |store| store.fence_nodes()).await {
        Ok(nodes) => nodes,
        Err(e) => {
            tracing::warn!("cluster: reading the rooms' owners failed: {e}");
            return;
        }
    };
    let (me, others): (Vec<String>, Vec<String>) =
        nodes.into_iter().partition(|n| *n == *link.node);
    let alive = match others.is_empty() {
        true => Vec::new(),
        false => match heartbeats(link, &others).await {
            Some(alive) => alive,
            None => return,
        },
    };
    // Each node whose rooms to look at, and since when a fence of it counts as stale.
    let stale = others
        .into_iter()
        .zip(alive)
        .filter(|(_, alive)| !alive)
        .map(|(node, _)| (node, i64::MAX))
        .chain(me.into_iter().map(|node| (node, link.started_ms)));
    for (node, before) in stale {
        let of = node.clone();
        let rooms = match read_store(server, move |store| store.fenced_rooms(&of, before)).await {
            Ok(rooms) => rooms,
            Err(e) => {
                tracing::warn!(%node, "cluster: reading a node's rooms failed: {e}");
                continue;
            }
        };
        let node: Arc<str> = node.into();
        for room in rooms {
            if server.lobby.room(&room).is_none() && !link.owners.contains_key(room.as_str()) {
                tracing::info!(room, %node, "cluster: a room of a gone node nobody here knew of");
                link.owners.insert(room.into(), node.clone());
            }
        }
    }
}

/// Takes room `room` over (its lease is gone): wins the lease, raises the fence (after which
/// the old owner commits nothing more), reads the game and restores it here. `None` if another
/// node was faster, or the game has finished (then its lobby entry goes). When Redis or the
/// store fails on the way, the lease is let go and the room left as it was, for a later try.
pub async fn take_over(server: &Arc<Server>, link: &Arc<Link>, room: &str) -> Located {
    // Never two copies of a room on one node.
    if let Some(e) = server.lobby.room(room) {
        return Ok(Some(e.handle));
    }
    if !take_lease(link, room).await? {
        return Ok(None);
    }
    let game = match read_fenced(server, link, room).await {
        Ok(game) => game,
        Err(e) => {
            tracing::warn!(room, "cluster: cannot take a room over now: {e}");
            link.release(room);
            return Err(Unreachable);
        }
    };
    let restored = match game {
        Some(g) if g.summary.result.is_none() => match server.lobby.restore_room(&g) {
            Ok(_) => server.lobby.room(room).map(|e| e.handle),
            Err(e) => {
                tracing::error!(room, "cluster: cannot restore a room: {e}");
                None
            }
        },
        _ => None,
    };
    server.lobby.forget_remote(room);
    link.owners.remove(room);
    match &restored {
        Some(_) => {
            tracing::info!(room, "cluster: took the room over");
            link.publish(
                link.names.lobby(),
                wire::frame(format_args!("O {}", link.node), room.as_bytes()),
            );
            if let Some((_, conns)) = link.members.remove(room) {
                node::close_conns(server, conns, "the room moved to another node; reconnect");
            }
        }
        None => {
            // A finished game (or one that cannot be played here): its lobby entry goes.
            server.store.release_room(room);
            link.release(room);
            link.publish_lobby(&[], &[room.to_string()]);
        }
    }
    Ok(restored)
}

/// Raises room `room`'s fence for this node, then reads its game (as committed before the
/// raise: the old owner's batch in flight is waited for).
async fn read_fenced(
    server: &Arc<Server>,
    link: &Link,
    room: &str,
) -> Result<Option<crate::store::GameRecord>, String> {
    let fenced = server.store.record(StoreEvent::Owner {
        room_id: room.to_string(),
        node: link.node.to_string(),
    });
    fenced.wait().await.map_err(|e| e.to_string())?;
    stored_game(server, room).await
}

/// Room `room`'s game as the store has it (`None`: no such game).
async fn stored_game(
    server: &Arc<Server>,
    room: &str,
) -> Result<Option<crate::store::GameRecord>, String> {
    let id = room.to_string();
    read_store(server, move |store| store.game(&id)).await
}

/// Runs `read` (a blocking store call) off the runtime's threads; a read that panicked is an
/// error too.
async fn read_store<T: Send + 'static>(
    server: &Server,
    read: impl FnOnce(&dyn crate::store::Store) -> Result<T, crate::store::StoreError> + Send + 'static,
) -> Result<T, String> {
    let store = server.store.clone();
    tokio::task::spawn_blocking(move || read(&*store))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

/// Where room `room` runs: here, on another node (a remote handle), or, when its lease is gone
/// and `may_take` (a room the lobby lists, or a seat the store says the player holds), here
/// after taking it over. `Ok(None)`: no such room; `Err`: Redis or the store did not answer.
pub async fn locate(server: &Arc<Server>, room: &str, may_take: bool) -> Located {
    if let Some(e) = server.lobby.room(room) {
        return Ok(Some(e.handle));
    }
    let Some(link) = server.lobby.cluster().cloned() else {
        return Ok(None);
    };
    // A room made a moment ago on another node may not have its lease yet (the node takes it
    // in the background as the creator hears of the room, and the creator can share the id at
    // once): a room nobody here knows of gets a few looks.
    let mut owner = None;
    for look in 0..FRESH_LOOKS {
        owner = lease_owner(&link, room).await?;
        if owner.is_some() || may_take || link.owner(room).is_some() {
            break;
        }
        if look + 1 < FRESH_LOOKS {
            tokio::time::sleep(FRESH_WAIT).await;
        }
    }
    let owner = match owner {
        None if may_take || link.owner(room).is_some() => lease_back(&link, room).await?,
        owner => owner,
    };
    match owner {
        Some(node) if *node != *link.node => {
            link.owners.insert(room.into(), node.into());
            Ok(Some(RoomHandle::remote(room.into(), link)))
        }
        // This node's: taken over meanwhile (by the sweep, or another resume), maybe still
        // being restored.
        Some(_) => settled(server, &link, room).await,
        None if may_take || link.owner(room).is_some() => {
            match take_over(server, &link, room).await? {
                Some(handle) => Ok(Some(handle)),
                None => settled(server, &link, room).await,
            }
        }
        None => Ok(None),
    }
}

/// Where room `room` runs once a takeover of it settles (another task of this node may be
/// restoring it, or another node have won it): looks up to 20 times, 50 ms apart. `Ok(None)`
/// only when the store says there is no game to play (finished, or none): a lease that went
/// (a takeover that failed and let it go) or a takeover still running after a second is
/// `Unreachable`, so a resume keeps its seat and tries again.
async fn settled(server: &Arc<Server>, link: &Arc<Link>, room: &str) -> Located {
    for _ in 0..20 {
        if let Some(e) = server.lobby.room(room) {
            return Ok(Some(e.handle));
        }
        match lease_owner(link, room).await? {
            Some(node) if *node != *link.node => {
                link.owners.insert(room.into(), node.into());
                return Ok(Some(RoomHandle::remote(room.into(), link.clone())));
            }
            Some(_) => {}
            None => {
                return match stored_game(server, room).await {
                    Ok(Some(g)) if g.summary.result.is_none() => Err(Unreachable),
                    Ok(_) => Ok(None),
                    Err(_) => Err(Unreachable),
                };
            }
        }
        tokio::time::sleep(FRESH_WAIT).await;
    }
    Err(Unreachable)
}

/// Where room `room` runs once its owner did not give a resume its seat back (a reconnect that
/// timed out, or answered while the room was still being restored there after a takeover).
/// An owner whose heartbeat is alive is asked again after a short wait (up to four times);
/// one that is gone is waited for, up to two leases, until its lease expires or moves, and the
/// room located again (taken over if nobody did). `Ok(None)`: no seat to give back.
pub async fn relocate(server: &Arc<Server>, room: &str, who: &Who) -> Located {
    let Some(link) = server.lobby.cluster().cloned() else {
        return Ok(None);
    };
    let mut asked = 0;
    for _ in 0..12 {
        tokio::time::sleep(link.lease / 4).await;
        let stale = link.owner(room);
        let handle = match lease_owner(&link, room).await? {
            Some(owner) if Some(owner.as_str()) == stale.as_deref() => {
                if !node_alive(&link, &owner).await {
                    continue;
                }
                asked += 1;
                RoomHandle::remote(room.into(), link.clone())
            }
            _ => {
                asked += 1;
                match locate(server, room, true).await? {
                    Some(handle) => handle,
                    None => return Ok(None),
                }
            }
        };
        if handle.reconnect(who.clone()).await {
            return Ok(Some(handle));
        }
        if asked >= 4 {
            return Ok(None);
        }
    }
    Ok(None)
}

/// Whether each of `nodes` has its heartbeat in Redis (`None`: Redis did not answer).
async fn heartbeats(link: &Link, nodes: &[impl AsRef<str>]) -> Option<Vec<bool>> {
    let keys: Vec<String> = nodes
        .iter()
        .map(|n| link.names.alive_key(n.as_ref()))
        .collect();
    let mut redis = link.redis.clone();
    let alive: Vec<Option<String>> = redis::cmd("MGET")
        .arg(&keys)
        .query_async(&mut redis)
        .await
        .ok()?;
    Some(alive.iter().map(Option::is_some).collect())
}

/// Whether `node`'s heartbeat is in Redis.
async fn node_alive(link: &Link, node: &str) -> bool {
    let mut redis = link.redis.clone();
    redis::cmd("EXISTS")
        .arg(link.names.alive_key(node))
        .query_async::<bool>(&mut redis)
        .await
        .unwrap_or(false)
}

/// A room's lease that is gone may come back: its node is alive and Redis restarted empty (the
/// node takes its leases again within a third of a lease). Waits up to a lease for that: the
/// owner then, or `None` (its node is gone).
async fn lease_back(link: &Link, room: &str) -> Result<Option<String>, Unreachable> {
    for _ in 0..6 {
        tokio::time::sleep(link.lease / 6).await;
        if let Some(owner) = lease_owner(link, room).await? {
            return Ok(Some(owner));
        }
    }
    Ok(None)
}

/// The node holding room `room`'s lease, if any (an error of Redis is logged).
async fn lease_owner(link: &Link, room: &str) -> Result<Option<String>, Unreachable> {
    let mut redis = link.redis.clone();
    redis::cmd("GET")
        .arg(link.names.owner_key(room))
        .query_async(&mut redis)
        .await
        .map_err(|e| {
            tracing::warn!(room, "cluster: reading a lease failed: {e}");
            Unreachable
        })
}

/// At start: which of the store's unfinished games this node restores (those whose lease it
/// wins, with their fence raised first; the others run on other nodes).
pub async fn claim_at_start(server: &Arc<Server>, link: &Link, room: &str) -> bool {
    if take_lease(link, room).await != Ok(true) {
        return false;
    }
    let fenced = server.store.record(StoreEvent::Owner {
        room_id: room.to_string(),
        node: link.node.to_string(),
    });
    fenced.wait().await.is_ok()
}

/// The unfinished rooms `player` created that other nodes run, for its caps (docs/scaling.md,
/// "Caps"). A room whose lease is gone (closed, or its node died and nobody took it yet) no
/// longer counts, and its entry goes; one taken over by another node still counts.
pub async fn claims_elsewhere(server: &Server, player: &str) -> crate::lobby::Counts {
    let mut counts = crate::lobby::Counts::default();
    let Some(link) = server.lobby.cluster() else {
        return counts;
    };
    let key = link.names.claims(player);
    let mut redis = link.redis.clone();
    let rooms: HashMap<String, String> = match redis::cmd("HGETALL")
        .arg(&key)
        .query_async(&mut redis)
        .await
    {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("cluster: reading a player's rooms failed: {e}");
            return counts;
        }
    };
    let rooms: Vec<(String, String)> = rooms
        .into_iter()
        .filter(|(room, _)| server.lobby.room(room).is_none())
        .collect();
    if rooms.is_empty() {
        return counts;
    }
    let keys: Vec<String> = rooms.iter().map(|(r, _)| link.names.owner_key(r)).collect();
    let owners: Vec<Option<String>> = redis::cmd("MGET")
        .arg(&keys)
        .query_async(&mut redis)
        .await
        .unwrap_or_default();
    let mut gone = Vec::new();
    for ((room, kind), owner) in rooms.iter().zip(owners) {
        match owner {
            Some(_) => counts.add(wire::claim_matchup(kind)),
            None => gone.push(room.clone()),
        }
    }
    if !gone.is_empty() {
        let _: redis::RedisResult<()> = redis::cmd("HDEL")
            .arg(&key)
            .arg(&gone)
            .query_async(&mut redis)
            .await;
    }
    counts
}

/// The nodes with connections in this node's rooms whose heartbeat has been gone for a whole
/// lease (`missing`: since when each was first seen without one): their stand-ins leave the
/// rooms as disconnected connections do (a player's grace starts; its seat waits for it to come
/// back through another node). Without this, a player whose node died would look connected
/// to the room forever.
async fn drop_dead_nodes(
    server: &Server,
    link: &Link,
    missing: &mut HashMap<Arc<str>, tokio::time::Instant>,
) {
    let nodes: Vec<Arc<str>> = {
        let set: HashSet<Arc<str>> = link.proxies.iter().map(|e| e.key().1.clone()).collect();
        set.into_iter().collect()
    };
    if nodes.is_empty() {
        missing.clear();
        return;
    }
    let Some(alive) = heartbeats(link, &nodes).await else {
        return;
    };
    let now = tokio::time::Instant::now();
    let mut still = HashMap::new();
    for (node, alive) in nodes.into_iter().zip(alive) {
        if alive {
            continue;
        }
        let since = missing.get(&node).copied().unwrap_or(now);
        if now.duration_since(since) < link.lease {
            still.insert(node, since);
            continue;
        }
        tracing::warn!(%node, "cluster: a node is gone; its connections leave this node's rooms");
        let gone: Vec<(ProxyKey, Proxied)> = link
            .proxies
            .iter()
            .filter(|e| e.key().1 == node)
            .map(|e| (e.key().clone(), e.value().clone()))
            .collect();
        for (key, proxied) in gone {
            link.proxies.remove(&key);
            // A stand-in of the pairing (room ""): its seek goes.
            if key.0.is_empty() {
                server.pairing.forget(proxied.client.conn_id);
                continue;
            }
            if let Some(entry) = server.lobby.room(&key.0) {
                let cmd = RoomCmd::Disconnected {
                    player_id: proxied.player_id,
                    conn_id: proxied.client.conn_id,
                };
                let _ = entry.handle.send(cmd).await;
            }
        }
    }
    *missing = still;
}
