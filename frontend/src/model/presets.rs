//! Presets as the page uses them: a preset's knobs put into the form, and the preset a link
//! names (`/?preset=article`). Every number and word of a preset comes from `hello.presets`.

use oversold_protocol::preset::PRESET_PARAM;
use oversold_protocol::{PresetInfo, RunRequest, Scenario};

use super::controls::Knobs;

/// The form with `request`'s knobs put in: what it names replaces the form's value, what it
/// leaves out keeps the form's. The server checks the ranges when the run starts, like any.
pub fn apply(mut knobs: Knobs, request: &RunRequest) -> Knobs {
    let scenario = request.scenario.unwrap_or(Scenario::Race);
    if knobs.scenario != scenario {
        knobs.enter(scenario);
    }
    let set = |slot: &mut u32, value: Option<u32>| {
        if let Some(v) = value {
            *slot = v;
        }
    };
    set(&mut knobs.stock, request.stock);
    set(&mut knobs.buyers, request.buyers);
    set(&mut knobs.app_servers, request.app_servers);
    set(&mut knobs.arrival_spread_ms, request.arrival_spread_ms);
    set(&mut knobs.race_window_ms, request.race_window_ms);
    // The form keeps one quantity box and a "random up to it" switch.
    match (request.max_qty, request.qty) {
        (Some(max), _) => {
            knobs.qty = max;
            knobs.random_qty = true;
        }
        (None, Some(qty)) => {
            knobs.qty = qty;
            knobs.random_qty = false;
        }
        (None, None) => {}
    }
    knobs
}

/// The preset a query string names (`preset=NAME`), if it names one `presets` holds.
pub fn named<'a>(query: &str, presets: &'a [PresetInfo]) -> Option<&'a PresetInfo> {
    let wanted = query
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix(PRESET_PARAM)?.strip_prefix('='))?;
    presets.iter().find(|p| p.name == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn article() -> PresetInfo {
        PresetInfo {
            name: "article".into(),
            label: "The article: 100 phones".into(),
            description: "d".into(),
            request: RunRequest {
                strategy: Some("naive".into()),
                stock: Some(100),
                buyers: Some(300),
                max_qty: Some(2),
                arrival_spread_ms: Some(250),
                ..RunRequest::default()
            },
            compare: false,
        }
    }

    #[test]
    fn a_preset_sets_what_it_names_and_keeps_the_rest() {
        let form = Knobs {
            race_window_ms: 7,
            app_servers: 3,
            ..Knobs::default()
        };
        let k = apply(form, &article().request);
        assert_eq!(
            (k.stock, k.buyers, k.qty, k.random_qty),
            (100, 300, 2, true)
        );
        assert_eq!(k.arrival_spread_ms, 250);
        assert_eq!((k.race_window_ms, k.app_servers), (7, 3));
        assert_eq!(k.scenario, Scenario::Race);
    }

    #[test]
    fn a_preset_brings_the_form_back_to_the_race() {
        let mut form = Knobs::default();
        form.enter(Scenario::Failover);
        let k = apply(form, &article().request);
        assert_eq!(k.scenario, Scenario::Race);
        assert_eq!(k.arrival_spread_ms, 250);
    }

    #[test]
    fn a_link_names_a_preset_the_server_has() {
        let list = [article()];
        assert_eq!(
            named("?preset=article", &list).map(|p| p.name.as_str()),
            Some("article")
        );
        assert_eq!(
            named("theme=dark&preset=article", &list).map(|p| p.name.as_str()),
            Some("article")
        );
        assert!(named("preset=nope", &list).is_none());
        assert!(named("presets=article", &list).is_none());
        assert!(named("", &list).is_none());
    }
}
