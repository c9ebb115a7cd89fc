//! The Lua sources the server runs, exactly as it loaded them (from `hello.scripts`), one tab each.
//! The tab open by default is the file the explained strategy runs (reserve.lua for the rest).

use leptos::prelude::*;
use oversold_protocol::ScriptSource as Script;

use crate::model::explain::{explain, script_for};
use crate::model::page::PageState;
use crate::model::strategies;
use crate::session::Session;

/// A tab per script the server announced; the explained strategy's own file open by default.
#[component]
pub fn ScriptSource() -> impl IntoView {
    let session = expect_context::<Session>();
    let scripts = move || {
        session.page.with(|p| {
            p.hello
                .as_ref()
                .map(|h| h.scripts.clone())
                .unwrap_or_default()
        })
    };
    // A tab the visitor picked, remembered with the strategy explained at the time: once the
    // explanation moves on (a new run, another chip), the tab follows it again.
    let picked = RwSignal::new(None::<(String, String)>);
    let explained = move || session.page.with(PageState::explained).unwrap_or_default();
    let open = move || {
        let list = scripts();
        let strategy = explained();
        let want = picked
            .get()
            .filter(|(for_strategy, _)| *for_strategy == strategy)
            .map(|(_, file)| file)
            .unwrap_or_else(|| script_for(&strategy).to_string());
        list.iter()
            .find(|s| s.file == want)
            .or_else(|| list.first())
            .cloned()
    };
    let open_file = move || open().map(|s| s.file).unwrap_or_default();
    let heading = move || {
        // Labels come from `hello`; redraw when it lands.
        let strategy = explained();
        let label = session
            .page
            .with(|p| strategies::label(p.strategies(), &strategy));
        match explain(&strategy).and_then(|e| e.script) {
            Some(_) => format!("{label}: the Lua it runs"),
            None => format!("{label} runs no Lua · the atomic version, for contrast"),
        }
    };
    view! {
        <section class="panel script" aria-label="Lua source">
            <h2>{heading}</h2>
            <Show when=move || { scripts().len() > 1 }>
                <div class="tabs" role="tablist">
                    <For each=scripts key=|s: &Script| s.file.clone() let:script>
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
                open()
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
