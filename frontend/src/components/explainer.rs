//! Why the naive strategy oversells and why the script cannot, in plain words and one timeline.

use leptos::prelude::*;

/// The explanation panel. Static text: it describes the mechanism, not a particular run.
#[component]
pub fn Explainer() -> impl IntoView {
    view! {
        <section class="panel explainer" aria-label="Why it happens">
            <h2>"Why the naive way oversells"</h2>
            <p>
                "Each buyer sends two commands: " <code>"GET stock"</code> ", then, if the number it got was big enough, "
                <code>"DECRBY stock qty"</code> ". Redis runs each command on its own without interruption, "
                "but nothing holds the two together. Between one buyer's GET and its DECRBY, other buyers' commands run."
            </p>
            <p>
                "So with one unit left, fifty buyers can all read 1, all decide they may buy, and all decrement. "
                "The check was true when it was made and false by the time the write landed. "
                "Every buyer that saw a positive stock goes on to take a unit, and the counter sinks below zero."
            </p>
            <ol class="timeline" aria-label="Two buyers interleaving">
                <Step who="buyer #7" cmd="GET stock → 1" note="looks fine" tone="a"/>
                <Step who="buyer #12" cmd="GET stock → 1" note="looks fine too" tone="b"/>
                <Step who="buyer #7" cmd="DECRBY stock 1 → 0" note="sold the last unit" tone="a"/>
                <Step who="buyer #12" cmd="DECRBY stock 1 → -1" note="sold a unit that does not exist" tone="b"/>
            </ol>
            <h2>"Why the script cannot"</h2>
            <p>
                "The Lua script does the read, the comparison and the decrement inside Redis. Redis executes a script "
                "from start to finish before it serves any other client, so no other buyer's command can land between "
                "the check and the write. The last unit goes to exactly one buyer; everyone after reads 0 and is refused."
            </p>
            <p class="muted">
                "It also costs one round trip instead of two, so the safe version is the faster one too."
            </p>
        </section>
    }
}

/// One line of the interleaving: who sent what, what came back, what the buyer concluded.
#[component]
fn Step(
    /// The buyer.
    who: &'static str,
    /// The command and its reply.
    cmd: &'static str,
    /// What it means.
    note: &'static str,
    /// `a` or `b`: which buyer, for colour.
    tone: &'static str,
) -> impl IntoView {
    view! {
        <li data-tone=tone>
            <span class="who">{who}</span>
            <code>{cmd}</code>
            <span class="note">{note}</span>
        </li>
    }
}
