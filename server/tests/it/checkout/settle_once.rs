//! Confirm, release and the reaper racing for the same holds, on purpose: each hold must
//! be settled once, whatever the interleaving, and give its units back (or sell them) once.
//!
//! Each round makes 60 holds that all expire at shop time 1000, then, at the same moment and
//! on separate connections, sends for every hold a confirm (its clock a little before or a
//! little after the expiry), a second confirm, a release, a second release, and lets three
//! reapers sweep at 1000. The replies must add up exactly: every unit once, as sold,
//! released or reaped.

use futures_util::future::join_all;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::common::TestRedis;
use oversold::store::holds::{self, ConfirmReply, HoldRequest, ReleaseReply};
use oversold::store::{CheckoutKeys, RedisConn, stock};

const ROUNDS: u32 = 25;
const HOLDS: u32 = 60;
const STOCK: u32 = 1_000_000;

/// What one of the racers got back.
#[derive(Debug, Default, Clone, Copy)]
struct Settled {
    confirmed: u64,
    released: u64,
    reaped: u64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_confirm_release_and_the_reaper_settle_each_hold_exactly_once() {
    let _turn = super::heavy().await;
    let redis = TestRedis::start();
    let mut admin = redis.conn().await;
    let keys = CheckoutKeys::new("settle-once");
    stock::init(&mut admin, keys.run(), STOCK).await.unwrap();
    let conns: Vec<RedisConn> = join_all((0..6).map(|_| redis.store.connect()))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut held_total, mut all) = (0u64, Settled::default());
    let mut winners = [0u32; 3];
    for round in 0..ROUNDS {
        // The holds: 1 to 3 units each, all expiring at shop time 1000.
        let mut made = Vec::new();
        for h in 0..HOLDS {
            let hold = keys.hold(&format!("r{round}-h{h}"));
            let qty = rng.random_range(1..=3);
            let request = format!("r{round}-q{h}");
            let r = HoldRequest {
                qty,
                now: 0,
                ttl: 1_000,
                customer: h % 7,
                request: &request,
                hold: &hold,
            };
            let reply = holds::reserve_hold(&mut admin, &keys, &r)
                .await
                .unwrap()
                .reply;
            assert!(matches!(reply, holds::HoldReply::Held { .. }), "{reply:?}");
            held_total += u64::from(qty);
            made.push((hold, qty, rng.random_range(995..=1_005u64)));
        }
        // Everyone at once.
        let conns = &conns;
        let confirms = made.iter().enumerate().flat_map(|(i, (hold, qty, now))| {
            let (keys, hold, qty, now) = (&keys, hold.clone(), *qty, *now);
            (0..2).map(move |copy| {
                let mut conn = conns[(i + copy) % 2].clone();
                let hold = hold.clone();
                async move {
                    match holds::confirm_hold(&mut conn, keys, &hold, now)
                        .await
                        .unwrap()
                        .reply
                    {
                        ConfirmReply::Confirmed { qty: q } => {
                            assert_eq!(q, qty);
                            (
                                hold,
                                Settled {
                                    confirmed: q.into(),
                                    ..Default::default()
                                },
                            )
                        }
                        ConfirmReply::Expired { .. } | ConfirmReply::Gone => {
                            (hold, Settled::default())
                        }
                    }
                }
            })
        });
        let releases = made.iter().enumerate().flat_map(|(i, (hold, _, _))| {
            let (keys, hold) = (&keys, hold.clone());
            (0..2).map(move |copy| {
                let mut conn = conns[2 + (i + copy) % 2].clone();
                let hold = hold.clone();
                async move {
                    match holds::release_hold(&mut conn, keys, &hold)
                        .await
                        .unwrap()
                        .reply
                    {
                        ReleaseReply::Released { qty, .. } => (
                            hold,
                            Settled {
                                released: qty.into(),
                                ..Default::default()
                            },
                        ),
                        ReleaseReply::Gone { .. } => (hold, Settled::default()),
                    }
                }
            })
        });
        let reapers = (0..3).map(|k| {
            let mut conn = conns[4 + k % 2].clone();
            let keys = &keys;
            async move {
                let mut got = Settled::default();
                loop {
                    let r = holds::reap(&mut conn, keys, 1_000, 7).await.unwrap().reply;
                    got.reaped += r.units;
                    if r.still_due == 0 {
                        return got;
                    }
                }
            }
        });
        let (confirmed, released, reaped) =
            tokio::join!(join_all(confirms), join_all(releases), join_all(reapers));
        // Per hold: at most one confirm or release won it.
        let mut won: std::collections::HashMap<String, u32> = Default::default();
        for (hold, s) in confirmed.iter().chain(released.iter()) {
            if s.confirmed + s.released > 0 {
                *won.entry(hold.id().to_string()).or_default() += 1;
            }
        }
        assert!(
            won.values().all(|&n| n == 1),
            "a hold settled twice: {won:?}"
        );
        let mut round_total = Settled::default();
        for (_, s) in confirmed.iter().chain(released.iter()) {
            round_total.confirmed += s.confirmed;
            round_total.released += s.released;
        }
        round_total.reaped = reaped.iter().map(|s| s.reaped).sum();
        winners[0] += u32::from(round_total.confirmed > 0);
        winners[1] += u32::from(round_total.released > 0);
        winners[2] += u32::from(round_total.reaped > 0);
        // Whatever is left was due: the reapers saw it all (or the next sweep does).
        let rest = holds::reap(&mut admin, &keys, 100_000_000_000_000, 1_000)
            .await
            .unwrap()
            .reply;
        round_total.reaped += rest.units;
        all.confirmed += round_total.confirmed;
        all.released += round_total.released;
        all.reaped += round_total.reaped;
        let c = holds::counters(&mut admin, &keys).await.unwrap();
        assert_eq!((c.held, c.holds), (0, 0), "round {round}: holds left");
        assert_eq!(
            all.confirmed + all.released + all.reaped,
            held_total,
            "round {round}: units settled {all:?} != units held {held_total}"
        );
        assert_eq!(c.sold as u64, all.confirmed);
        assert_eq!(c.available, Some(i64::from(STOCK) - all.confirmed as i64));
    }
    println!(
        "{ROUNDS} rounds of {HOLDS} holds: {} units confirmed, {} released, {} reaped; \
         rounds with a confirm / release / reaper win: {winners:?}",
        all.confirmed, all.released, all.reaped
    );
    // The race really was a race: every kind of racer won somewhere.
    assert!(winners.iter().all(|&w| w > 0), "{winners:?}");
    holds::remove_run(&mut admin, &keys).await.unwrap();
}
