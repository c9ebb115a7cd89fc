//! The Lua sources the server runs, exactly as it loaded them (from `hello.scripts`), one tab each.

use leptos::prelude::*;
use oversold_protocol::ScriptSource as Script;

use crate::session::Session;

/// The script the talk is about; shown first whatever order the server lists them in.
const MAIN_SCRIPT: &str = "reserve.lua";

/// A tab per script the server announced, `reserve.lua` open by default.
#[component]
pub fn ScriptSource() -> impl IntoView {
    let session = expect_context::<Session>();
    let scripts = move || {
        session
            .hello
            .with(|h| h.as_ref().map(|h| h.scripts.clone()).unwrap_or_default())
    };
    // `None` until the visitor picks a tab: then the main script (or the first) is shown.
    let picked = RwSignal::new(None::<String>);
    let open = move || {
        let list = scripts();
        let want = picked.get().unwrap_or_else(|| MAIN_SCRIPT.to_string());
        list.iter()
            .find(|s| s.file == want)
            .or_else(|| list.first())
            .cloned()
    };
    let open_file = move || open().map(|s| s.file).unwrap_or_default();
    view! {
        <section class="panel script" aria-label="Lua source">
            <h2>"The atomic version, as Redis runs it"</h2>
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
                                    on:click=move |_| picked.set(Some(file.get_value()))
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
            <Show when=move || session.hello.with(Option::is_none)>
                <p class="muted">"The source appears once the server says hello."</p>
            </Show>
        </section>
    }
}
