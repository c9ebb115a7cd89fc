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
    let tabs = Tabs::new(session);
    view! {
        <section class="panel script" aria-label="Lua source">
            <h2>{move || tabs.heading()}</h2>
            <Show when=move || tabs.scripts.with(|s| s.len() > 1)>
                <TabList tabs/>
            </Show>
            {move || {
                tabs.open
                    .get()
                    .map(|script| {
                        view! {
                            <figure class="source">
                                <figcaption>{format!("lua/{}", script.file)}</figcaption>
                                // Focusable: it scrolls, and a keyboard must be able to scroll it.
                                <pre tabindex="0" aria-label=format!("lua/{}", script.file)>
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

/// The scripts, which one the explained strategy runs, and which tab is open.
///
/// Memos: the page state changes with every outcomes frame, the scripts only with `hello`, the
/// choice only with the explained strategy, and the source is a big node to redraw.
#[derive(Clone, Copy)]
struct Tabs {
    session: Session,
    /// Every script the server announced, in its order.
    scripts: Memo<Vec<Script>>,
    /// The explained strategy's script and the heading that goes with it.
    choice: Memo<Option<ScriptChoice>>,
    /// A tab the visitor picked, remembered with the strategy explained at the time: once the
    /// explanation moves on (a new run, another chip), the tab follows it again.
    picked: RwSignal<Option<(Option<String>, String)>>,
    /// The script shown: the visitor's pick, else the choice, else the first.
    open: Memo<Option<Script>>,
}

impl Tabs {
    /// Nothing picked: the explained strategy's script is open.
    fn new(session: Session) -> Self {
        let scripts = Memo::new(move |_| {
            session.page.with(|p| {
                p.hello
                    .as_ref()
                    .map(|h| h.scripts.clone())
                    .unwrap_or_default()
            })
        });
        let choice = Memo::new(move |_| {
            let scenario = session.knobs.with(|k| k.scenario);
            session.page.with(|p| {
                p.explained_in(scenario)
                    .map(|name| strategies::script_for(p.offered(scenario), &name))
            })
        });
        let picked = RwSignal::new(None::<(Option<String>, String)>);
        let open = Memo::new(move |_| {
            let want = picked
                .get()
                .filter(|(for_strategy, _)| *for_strategy == explained(session))
                .map(|(_, file)| file)
                .or_else(|| choice.with(|c| c.as_ref().and_then(|c| c.file.clone())));
            scripts.with(|list| {
                list.iter()
                    .find(|s| Some(&s.file) == want.as_ref())
                    .or_else(|| list.first())
                    .cloned()
            })
        });
        Self {
            session,
            scripts,
            choice,
            picked,
            open,
        }
    }

    /// The open tab's file name (empty before `hello`).
    fn open_file(self) -> String {
        self.open
            .with(|s| s.as_ref().map(|s| s.file.clone()).unwrap_or_default())
    }

    /// The panel's heading: what the open script is to the explained strategy, or just "Lua".
    fn heading(self) -> String {
        self.choice.with(|c| {
            c.as_ref().map_or_else(
                || "Lua".to_string(),
                |ScriptChoice { heading, .. }| heading.clone(),
            )
        })
    }

    /// Open `file`, for the strategy explained now.
    fn pick(self, file: String) {
        self.picked.set(Some((explained(self.session), file)));
    }
}

/// The strategy the why panel explains, among the scenario's the switch shows.
fn explained(session: Session) -> Option<String> {
    let scenario = session.knobs.with(|k| k.scenario);
    session.page.with(|p| p.explained_in(scenario))
}

/// One tab per script, the open one marked.
#[component]
fn TabList(tabs: Tabs) -> impl IntoView {
    view! {
        <div class="tabs" role="tablist">
            <For each=move || tabs.scripts.get() key=|s: &Script| s.file.clone() let:script>
                {
                    let file = StoredValue::new(script.file.clone());
                    view! {
                        <button
                            class="filter"
                            role="tab"
                            class:on=move || file.with_value(|f| *f == tabs.open_file())
                            aria-selected=move || file.with_value(|f| *f == tabs.open_file()).to_string()
                            on:click=move |_| tabs.pick(file.get_value())
                        >
                            {script.file.clone()}
                        </button>
                    }
                }
            </For>
        </div>
    }
}
