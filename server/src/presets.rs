//! The presets: named crowds that open a lesson in one click and one link. This table is the
//! only place their numbers and words are written; `hello.presets` carries it to the page, and
//! `oversold run|compare --preset NAME` reads it on the command line.

use oversold_protocol::{PresetInfo, RunRequest};

/// Every preset, in the order the page shows them.
pub fn all() -> Vec<PresetInfo> {
    vec![article(), throughput()]
}

/// The preset called `name`, if there is one.
pub fn find(name: &str) -> Option<PresetInfo> {
    all().into_iter().find(|p| p.name == name)
}

/// Every preset's name, for an error that lists them.
pub fn names() -> Vec<String> {
    all().into_iter().map(|p| p.name).collect()
}

/// The article's opening: a flash sale of 100 phones, at most two per order, sold by the
/// check-then-decrement every app server runs.
///
/// The arrivals are spread and each app server takes a moment between its read and its
/// write (its own checks, a call to the pricing service), as real ones do. A crowd that lands
/// in one instant oversells by hundreds; the story is a sale that looks almost right (a fifth
/// too many) and is found out days later. Measured over seeds 1-6 while the machine ran other
/// work: 113 to 144 units sold of 100 (`oversold run --preset article --seed N`).
fn article() -> PresetInfo {
    PresetInfo {
        name: "article".into(),
        label: "The article: 100 phones".into(),
        description: "The article's opening: 100 phones, at most two per order, 300 buyers \
                      over eight app servers, each reading the stock, checking it and \
                      decrementing it a moment later. The article's sale took 121 for its 100; \
                      count this one's."
            .into(),
        request: RunRequest {
            strategy: Some("naive".into()),
            stock: Some(100),
            buyers: Some(ARTICLE_BUYERS),
            max_qty: Some(2),
            app_servers: Some(8),
            arrival_spread_ms: Some(ARTICLE_SPREAD_MS),
            race_window_ms: Some(ARTICLE_WINDOW_MS),
            ..RunRequest::default()
        },
        compare: false,
    }
}

/// Buyers in the article's crowd: enough that the phones run out well before the crowd does.
const ARTICLE_BUYERS: u32 = 300;
/// Over how long they arrive.
const ARTICLE_SPREAD_MS: u32 = 500;
/// The app's work between reading the stock and writing it: buyers who read within this
/// window of the sell-out all still see phones, and all sell one.
const ARTICLE_WINDOW_MS: u32 = 20;

/// Throughput side by side: every strategy against one big crowd that arrives at once, so
/// each one's figure is what its store can do, not how fast buyers happened to arrive. The
/// seed's claim (PostgreSQL row locks past 1,000 a second saturate, Lua does 50,000+) is
/// measured here on this machine, in the same run.
fn throughput() -> PresetInfo {
    PresetInfo {
        name: "throughput".into(),
        label: "PostgreSQL vs Lua, per second".into(),
        description: "Every strategy against the same 1,000 buyers arriving at once for 1,000 \
                      units: the scoreboard's throughput chart shows what each one sustains on \
                      this machine, PostgreSQL's row lock beside one Lua script."
            .into(),
        request: RunRequest {
            stock: Some(THROUGHPUT_CROWD),
            buyers: Some(THROUGHPUT_CROWD),
            qty: Some(1),
            app_servers: Some(8),
            arrival_spread_ms: Some(0),
            race_window_ms: Some(0),
            ..RunRequest::default()
        },
        compare: true,
    }
}

/// The throughput crowd, and its stock: one unit each, so every buyer does a full purchase
/// (a sold-out refusal is cheaper and would flatter the slow stores). A thousand keeps the
/// whole comparison to seconds: the lock and PostgreSQL serve a few hundred a second, and
/// five thousand made their buyers give up after waiting ten.
const THROUGHPUT_CROWD: u32 = 1_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_a_valid_request_and_names_are_unique() {
        let all = all();
        for p in &all {
            let config = if p.compare {
                assert!(
                    p.request.strategy.is_none(),
                    "{}: a compare names no strategy",
                    p.name
                );
                p.request.validate_compare(1).map(|_| ())
            } else {
                p.request.validate(1).map(|_| ())
            };
            assert!(config.is_ok(), "{}: {config:?}", p.name);
            assert_eq!(all.iter().filter(|q| q.name == p.name).count(), 1);
        }
        assert_eq!(
            find("article").map(|p| p.label),
            Some("The article: 100 phones".into())
        );
        assert!(find("nope").is_none());
    }
}
