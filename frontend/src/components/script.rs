//! The Lua sources the server runs, exactly as it loaded them (from `hello.scripts`).

use leptos::prelude::*;
use oversold_protocol::ScriptSource as Script;

use crate::session::Session;

/// Every script the server announced, with its file name.
#[component]
pub fn ScriptSource() -> impl IntoView {
    let session = expect_context::<Session>();
    let scripts = move || {
        session
            .hello
            .with(|h| h.as_ref().map(|h| h.scripts.clone()).unwrap_or_default())
    };
    view! {
        <section class="panel script" aria-label="Lua source">
            <h2>"The atomic version, as Redis runs it"</h2>
            <For each=scripts key=|s: &Script| (s.file.clone(), s.source.len()) let:script>
                <figure class="source">
                    <figcaption>{format!("lua/{}", script.file)}</figcaption>
                    <pre><code data-testid="lua-source">{script.source.clone()}</code></pre>
                </figure>
            </For>
            <Show when=move || session.hello.with(Option::is_none)>
                <p class="muted">"The source appears once the server says hello."</p>
            </Show>
        </section>
    }
}
