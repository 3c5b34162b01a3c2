//! `[cluster]`: running as one node of several (docs/scaling.md): the Redis that holds room
//! leases and carries commands, events and the lobby between nodes, this node's id, and the
//! lease time. Absent: a single node, as by default.

use std::time::Duration;

use serde::Deserialize;

use super::{invalid, ms, ConfigError};

/// `[cluster]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCluster {
    /// `redis://[:password@]host:port`.
    pub redis_url: String,
    /// Unique per node: letters, digits, `-`, `_` and `.`, at most 64.
    pub node_id: String,
    /// A room's lease; the owner renews it every third of it.
    #[serde(default = "default_lease_ms")]
    pub lease_ms: u64,
    /// The prefix of every Redis key and channel the cluster uses.
    #[serde(default = "default_namespace")]
    pub namespace: String,
}

fn default_namespace() -> String {
    "caro".into()
}

fn default_lease_ms() -> u64 {
    5000
}

/// `[cluster]`, validated.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// The Redis.
    pub redis_url: String,
    /// This node's id.
    pub node_id: String,
    /// A room's lease.
    pub lease: Duration,
    /// The prefix of its Redis keys and channels.
    pub namespace: String,
}

impl TryFrom<RawCluster> for ClusterConfig {
    type Error = ConfigError;

    fn try_from(raw: RawCluster) -> Result<Self, ConfigError> {
        if !raw.redis_url.starts_with("redis://") {
            return Err(invalid(
                "cluster.redis_url",
                "must be a Redis URL (redis://[:password@]host:port; TLS is not built in)",
            ));
        }
        let plain = |s: &str| {
            !s.is_empty()
                && s.len() <= 64
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if !plain(&raw.namespace) {
            return Err(invalid(
                "cluster.namespace",
                "must be 1 to 64 letters, digits, '-', '_' or '.'",
            ));
        }
        if !plain(&raw.node_id) {
            return Err(invalid(
                "cluster.node_id",
                "must be 1 to 64 letters, digits, '-', '_' or '.'",
            ));
        }
        if raw.lease_ms > 600_000 {
            return Err(invalid("cluster.lease_ms", "must be at most 600000"));
        }
        Ok(ClusterConfig {
            redis_url: raw.redis_url,
            node_id: raw.node_id,
            lease: ms("cluster.lease_ms", raw.lease_ms, 300)?,
            namespace: raw.namespace,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    #[test]
    fn a_cluster_needs_postgres_a_redis_url_and_a_plain_node_id() {
        let pg = "[store]\nurl = \"postgres://u@h/db\"\n";
        let c = Config::from_toml(&format!(
            "{pg}[cluster]\nredis_url = \"redis://127.0.0.1:6379\"\nnode_id = \"node-a\"\n"
        ))
        .unwrap();
        let cluster = c.cluster.unwrap();
        assert_eq!(cluster.node_id, "node-a");
        assert_eq!(cluster.lease.as_millis(), 5000);
        let err = |text: &str| Config::from_toml(text).unwrap_err().to_string();
        assert_eq!(
            err("[cluster]\nredis_url = \"redis://h\"\nnode_id = \"a\"\n"),
            "cluster: needs [store] url: the nodes of a cluster share one PostgreSQL database"
        );
        assert_eq!(
            err(&format!(
                "{pg}[cluster]\nredis_url = \"http://h\"\nnode_id = \"a\"\n"
            )),
            "cluster.redis_url: must be a Redis URL (redis://[:password@]host:port; TLS is not built in)"
        );
        assert_eq!(
            err(&format!(
                "{pg}[cluster]\nredis_url = \"redis://h\"\nnode_id = \"a b\"\n"
            )),
            "cluster.node_id: must be 1 to 64 letters, digits, '-', '_' or '.'"
        );
        assert_eq!(
            err(&format!(
                "{pg}[cluster]\nredis_url = \"redis://h\"\nnode_id = \"a\"\nlease_ms = 10\n"
            )),
            "cluster.lease_ms: must be at least 300"
        );
        assert!(Config::default().cluster.is_none());
    }
}
