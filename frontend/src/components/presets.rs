//! Lessons in one click: a button per preset `hello` lists (its words are the server's),
//! which puts the preset's knobs into the form and starts its run or its comparison. A link
//! `/?preset=NAME` puts the same knobs into the form and marks that button.

use leptos::prelude::*;
use oversold_protocol::PresetInfo;

use crate::model::page::PageState;
use crate::model::presets;
use crate::session::{Link, Session};
use crate::socket::Socket;

/// The row of preset buttons; absent until `hello` lists some.
#[component]
pub fn Presets() -> impl IntoView {
    let session = expect_context::<Session>();
    // A Memo: the list changes only with `hello`, the page with every frame.
    let list = Memo::new(move |_| {
        session.page.with(|p| {
            p.hello
                .as_ref()
                .map(|h| h.presets.clone())
                .unwrap_or_default()
        })
    });
    view! {
        <Show when=move || list.with(|l| !l.is_empty())>
            <div class="presets" role="group" aria-label="Lessons in one click">
                <span class="more-label">"Lessons in one click:"</span>
                <For each=move || list.get() key=|p: &PresetInfo| p.name.clone() let:preset>
                    <PresetButton preset=preset/>
                </For>
            </div>
        </Show>
    }
}

/// One preset: its label, and its description as the tooltip and the screen reader's text.
#[component]
fn PresetButton(
    /// The preset, as `hello` listed it.
    preset: PresetInfo,
) -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let testid = format!("preset-{}", preset.name);
    let name = preset.name.clone();
    let linked = move || {
        session
            .linked_preset
            .with(|l| l.as_deref() == Some(name.as_str()))
    };
    let disabled = move || session.link.get() != Link::Open || session.page.with(PageState::busy);
    let label = preset.label.clone();
    let title = preset.description.clone();
    let preset = StoredValue::new(preset);
    let on_click = move |_| {
        preset.with_value(|p| {
            session
                .knobs
                .update(|k| *k = presets::apply(*k, &p.request));
            session.linked_preset.set(None);
            match (&p.request.strategy, p.compare) {
                (Some(strategy), false) => socket.start_run(strategy),
                _ => socket.start_compare(),
            }
        });
    };
    view! {
        <button
            class=move || if linked() { "preset linked" } else { "preset" }
            data-testid=testid
            title=title.clone()
            aria-description=title
            disabled=disabled
            on:click=on_click
        >
            {label}
        </button>
    }
}
