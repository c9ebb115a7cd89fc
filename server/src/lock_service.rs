//! The lock service of a `redlock` run: three independent Redis masters, each holding its
//! own copy of the run's lock key, none replicating to another.
//!
//! By default ([`LockMasters::PerRun`]) the run starts three private `redis-server`s (on
//! free loopback ports, killed with this process like every private Redis) and stops them
//! when it ends: nobody else's Redis is asked to hold a lock, and a test or a student may
//! kill one without touching the stock. [`LockMasters::Given`] names three that someone
//! else runs (the tests, which kill or freeze one mid-run). Why not the shared Redis or a
//! cluster's masters: see `strategy/redlock.rs`.

use std::time::Duration;

use crate::backends::{LOCK_MASTERS, LockMasters};
use crate::private_redis::PrivateRedis;
use crate::shelf::ShelfError;
use crate::store::scripts::{self, LuaFile};
use crate::store::{RedisConn, Store, StoreError, app_server_name};

/// The lock masters of one run. Dropping it stops the servers the run started.
pub struct LockService {
    masters: Vec<Store>,
    /// The `redis-server`s this run started ([`LockMasters::PerRun`]); empty when given.
    servers: Vec<PrivateRedis>,
}

impl LockService {
    /// The masters `how` says: start three (off the async threads: a start blocks until the
    /// server answers), or take the given ones.
    pub async fn for_run(how: &LockMasters) -> Result<LockService, ShelfError> {
        match how {
            LockMasters::Given(stores) => Ok(LockService {
                masters: stores.to_vec(),
                servers: Vec::new(),
            }),
            LockMasters::PerRun => {
                let starts =
                    (0..LOCK_MASTERS).map(|_| tokio::task::spawn_blocking(PrivateRedis::start));
                let mut servers = Vec::with_capacity(LOCK_MASTERS);
                let mut failed = None;
                // Every start is awaited, so a server that did start is kept (and stopped
                // on drop) even when another did not.
                for started in futures_util::future::join_all(starts).await {
                    match started {
                        Ok(Ok(server)) => servers.push(server),
                        Ok(Err(e)) => failed = Some(e.to_string()),
                        Err(e) => failed = Some(e.to_string()),
                    }
                }
                let service = LockService::own(servers)?;
                match failed {
                    Some(why) => Err(ShelfError::OwnRedis(format!("a lock master: {why}"))),
                    None => Ok(service),
                }
            }
        }
    }

    fn own(servers: Vec<PrivateRedis>) -> Result<LockService, ShelfError> {
        let masters = servers
            .iter()
            .map(|s| Store::open(&s.url()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ShelfError::OwnRedis(e.to_string()))?;
        Ok(LockService { masters, servers })
    }

    /// App server `k`'s connections to every master, in master order, each waiting at most
    /// `vote_timeout` for an answer. Named `oversold:{run}:app-{k}:lock-{m}`, so `CLIENT
    /// LIST` on a master shows whose they are.
    pub async fn connect_seat(
        &self,
        run_id: &str,
        k: u32,
        vote_timeout: Duration,
    ) -> Result<Vec<RedisConn>, StoreError> {
        let app = app_server_name(run_id, k);
        let names: Vec<String> = (0..self.masters.len())
            .map(|m| format!("{app}:lock-{m}"))
            .collect();
        futures_util::future::try_join_all(
            self.masters
                .iter()
                .zip(&names)
                .map(|(master, name)| master.connect_named_within(name, vote_timeout)),
        )
        .await
    }

    /// `SCRIPT LOAD` `script` on every master, so a buyer's first release there is one
    /// `EVALSHA`, not `EVALSHA`, `NOSCRIPT`, `EVAL` (set-up's requests, not a buyer's).
    pub async fn preload(&self, script: &LuaFile) -> Result<(), StoreError> {
        let loads = self.masters.iter().map(|master| async move {
            let mut conn = master.connect().await?;
            scripts::preload(&mut conn, script).await
        });
        futures_util::future::try_join_all(loads).await.map(drop)
    }

    /// Stop the servers this run started, off the async threads (a kill waits for the
    /// process to end). Given masters are left running.
    pub async fn stop(self) {
        if self.servers.is_empty() {
            return;
        }
        let servers = self.servers;
        let _ = tokio::task::spawn_blocking(move || drop(servers)).await;
    }
}
