//! The Lua sources the server runs, exactly as it loaded them (from `hello.scripts`), one tab each.
//! The tab open by default is the explained strategy's main script (`about.scripts[0]`), or, for
//! a strategy that runs none, the script of the featured safe strategy, for contrast.

use leptos::prelude::*;
use oversold_protocol::ScriptSource as Script;

use crate::model::strategies::{self, ScriptChoice};
use crate::session::Session;

/// A tab per script the server announced; the explained strategy's own file open by default.
#[component]
pub fn ScriptSource() -> impl IntoView {
    let session = expect_context::<Session>();
    // Memos: the page state changes with every outcomes frame, the scripts only with `hello`,
    // the choice only with the explained strategy, and the source is a big node to redraw.
    let scripts = Memo::new(move |_| {
        session.page.with(|p| {
            p.hello
                .as_ref()
                .map(|h| h.scripts.clone())
                .unwrap_or_default()
        })
    });
    // The strategy the why panel explains, among the scenario's the switch shows.
    let scenario = move || session.knobs.with(|k| k.scenario);
    let explained = move || {
        let scenario = scenario();
        session.page.with(|p| p.explained_in(scenario))
    };
    let choice = Memo::new(move |_| {
        let scenario = scenario();
        session.page.with(|p| {
            p.explained_in(scenario)
                .map(|name| strategies::script_for(p.offered(scenario), &name))
        })
    });
    // A tab the visitor picked, remembered with the strategy explained at the time: once the
    // explanation moves on (a new run, another chip), the tab follows it again.
    let picked = RwSignal::new(None::<(Option<String>, String)>);
    let open = Memo::new(move |_| {
        let want = picked
            .get()
            .filter(|(for_strategy, _)| *for_strategy == explained())
            .map(|(_, file)| file)
            .or_else(|| choice.with(|c| c.as_ref().and_then(|c| c.file.clone())));
        scripts.with(|list| {
            list.iter()
                .find(|s| Some(&s.file) == want.as_ref())
                .or_else(|| list.first())
                .cloned()
        })
    });
    let open_file = move || open.with(|s| s.as_ref().map(|s| s.file.clone()).unwrap_or_default());
    let heading = move || {
        choice.with(|c| {
            c.as_ref().map_or_else(
                || "Lua".to_string(),
                |ScriptChoice { heading, .. }| heading.clone(),
            )
        })
    };
    view! {
        <section class="panel script" aria-label="Lua source">
            <h2>{heading}</h2>
            <Show when=move || scripts.with(|s| s.len() > 1)>
                <div class="tabs" role="tablist">
                    <For each=move || scripts.get() key=|s: &Script| s.file.clone() let:script>
                        {
                            let file = StoredValue::new(script.file.clone());
                            view! {
                                <button
                                    class="filter"
                                    role="tab"
                                    class:on=move || file.with_value(|f| *f == open_file())
                                    aria-selected=move || file.with_value(|f| *f == open_file()).to_string()
                                    on:click=move |_| picked.set(Some((explained(), file.get_value())))
                                >
                                    {script.file.clone()}
                                </button>
                            }
                        }
                    </For>
                </div>
            </Show>
            {move || {
                open
                    .get()
                    .map(|script| {
                        view! {
                            <figure class="source">
                                <figcaption>{format!("lua/{}", script.file)}</figcaption>
                                <pre>
                                    <code data-testid="lua-source">{script.source}</code>
                                </pre>
                            </figure>
                        }
                    })
            }}
            <Show when=move || session.page.with(|p| p.hello.is_none())>
                <p class="muted">"The source appears once the server says hello."</p>
            </Show>
        </section>
    }
}
